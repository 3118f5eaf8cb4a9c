"""Pure metric functions (numpy/pandas/scipy, no Django: .importlinter's metrics contract), each module's
docstring stating its formulas (SPEC §6; docs/reference/metrics.md).

Shared by every study:

- ``answers``: the tidy answers table every metric takes, and its checks (``AnswersError``).
- ``generic``: the generic report section's metrics, each agent beside the humans, for any answer shape.
- ``groups``: the same, per group of a participant field (a questionnaire answer, a persona's field).
- ``exclusion``: what the exclusion rules measure (surveys/definition/exclusion_rules.py names the rules).

The answer bins of the 0–100 scale are ``surveys.answer_bins`` (the instruments score with them too).

Per study family:

- Belem et al.: ``belem_attention`` (the Spearman attention filter; the core's exclusion rule and Tang RQ1's
  report apply it too); the rest in its own package, ``families.belem.metrics`` (agreement, knowledge bias,
  the paper's tables).
- Tang et al.: in its own package, ``families.tang.metrics`` (RQ1: KL divergence, Brunner–Munzel; RQ2: the four
  consistency metrics, baseline and paired comparisons, the Methods' and the authors' reading of answers).
- Bahaj et al.: ``bahaj_overprecision`` (hit rates and interval lengths by confidence), ``bahaj_aggregation``
  (several intervals of one question as one), ``bahaj_draws`` (seeded draws for the resampled tables).
- Sileo & Moens: in its own package, ``families.sileo.metrics`` (accuracy, the human baseline's agreement).
"""
