"""An example lab family: one metric (``iqr``) and one report section (``lab_spread``).

hedgelab finds it through the entry point of pyproject.toml (group ``hedgelab.families``), which names
:data:`FAMILY`. The contributions are references ("module:attribute"): nothing is imported until a study uses them.
"""
from config.registry import Family

FAMILY = Family(
    name="lab-example",
    summary="Example lab family: the spread (interquartile range) of each agent's answers",
    metrics={"iqr": "hedgelab_lab_example.metrics:iqr"},
    sections={"lab_spread": "hedgelab_lab_example.section"},
)
