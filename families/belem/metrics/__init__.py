"""Belem et al.'s pure metrics (numpy/pandas/scipy, no Django: .importlinter's metrics contract), each module's
docstring stating its formulas: ``agreement`` (proportional agreement, %PA, MAE, Wasserstein), ``knowledge_bias``
(verifiable statements), ``tables`` (Tables 1, 2, 5, 6, 7), ``attention`` (the Spearman attention filter they
apply)."""
