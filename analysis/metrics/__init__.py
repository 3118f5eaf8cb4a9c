"""Pure metric functions (numpy/pandas/scipy, no Django: .importlinter's metrics contract), each module's
docstring stating its formulas (SPEC §6; docs/reference/metrics.md).

Shared by every study:

- ``answers``: the tidy answers table every metric takes, and its checks (``AnswersError``).
- ``generic``: the generic report section's metrics, each agent beside the humans, for any answer shape.
- ``groups``: the same, per group of a participant field (a questionnaire answer, a persona's field).
- ``exclusion``: what the exclusion rules measure (surveys/definition/exclusion_rules.py names the rules).
- ``named``: the core's metrics a study file may name in ``[report] metrics`` (a family contributes more through
  config.registry, kind ``metrics``).

The answer bins of the 0–100 scale are ``surveys.answer_bins`` (the instruments score with them too).

A study family's own metrics are in its package, ``families.<name>.metrics`` (pure too: the same contract), and
reach the core only through the family's report sections and the registry.
"""
