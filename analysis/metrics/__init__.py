"""Pure metric functions (numpy/pandas/scipy, no Django), one module per study family.

- ``bins``: the 21 answer bins shared by the 0–100 kinds (SPEC §6).
- ``belem_*``: Belem et al. — proportional agreement, MAE, Wasserstein (``belem_agreement``), the Spearman
  attention filter (``belem_attention``), knowledge-bias gaps (``belem_knowledge_bias``), Tables 1/2/5/6
  (``belem_tables``).
- ``tang_*``: Tang et al. — RQ1 divergences (``tang_divergence``), RQ2 consistency (``tang_consistency``).
"""
