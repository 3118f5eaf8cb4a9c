"""Bahaj et al.'s metrics, pure functions of answer tables (numpy, pandas; no Django: .importlinter's metrics
contract): ``overprecision`` (hit rates and interval lengths by confidence: hit@c, Pearson r, DS, ILS),
``aggregation`` (several intervals of one question as one) and ``draws`` (seeded draws for the resampled
tables)."""
