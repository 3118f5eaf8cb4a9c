"""Tang et al.'s metrics, pure functions of answer tables (numpy, pandas, scipy; no Django: .importlinter's
metrics contract): ``divergence`` (RQ1: KL divergence, Brunner–Munzel, absolute median difference),
``consistency`` (RQ2: the four consistency metrics, the random baseline, paired comparisons) and ``reading``
(RQ2: the Methods' and the authors' reading of an answer)."""
