"""The report options of the Bahaj et al. kind (``interval_confidence``): named choices of how its report scores
the answers (surveys/report_options.py; set with ``report <study> --option NAME=VALUE``).

- ``reading``: ``text`` (a reading of the paper's prose; default for new studies) or ``authors`` (what the
  authors' notebooks compute; the shipped replication's reading). What each changes:
  metrics/overprecision.py, metrics/aggregation.py and report.py.
- ``mixed_intervals``: how many intervals one mixed-setting aggregate (Table 6) takes: ``15`` (the authors': 3
  per level × 5 levels) or ``9`` (the paper's §5.4.1); by default the one of the chosen reading.
"""
from __future__ import annotations

from surveys.report_options import ReportOption

READING = ReportOption(
    "reading",
    {"text": "a reading of the paper's prose. Parsing: numbers read as written (\"1.5 million\", \"2.5e6\", "
             "\"$1,200\", \"-3 to 5\"), the lower_bound/upper_bound lines win over other numbers, else the last "
             "interval written; a reversed interval or a single number is unparseable. Scoring: over the parsed "
             "intervals; hit-avg the mean of the five hit@c; 10 draws of one answer per item among the parsed "
             "ones; aggregation draws without replacement, clean weighted means; Figure 2 as hit rates by scale",
     "authors": "the authors' notebooks. Parsing: their rule-based cleaner of the lower_bound/upper_bound lines with "
                "its lossy rules (\"1.5 million\" → 1.5, \"$1,200\" → missing, \"-3 to 5\" → −35), point "
                "intervals allowed, refinement replies read as Python literals. Scoring: an unparsed answer is a "
                "miss and stays in the denominator, reversed bounds are misses; hit-avg pooled over the levels; 10 "
                "draws of one answer (try) per item among all; Pearson r per draw, averaged; aggregation draws 3 "
                "per question and level with replacement, the authors' edge cases (the [0, 0] collapses), CWA on "
                "raw percents in the mixed setting only; refinements scored only where both intervals were read; "
                "Figure 2 as count histograms of the answers of hits and misses"},
    help="How the Bahaj et al. report reads and scores answers (docs/reference/bahaj-protocol.md, "
         "families/bahaj/report.py).")
MIXED_INTERVALS = ReportOption(
    "mixed_intervals",
    {"by-reading": "15 under the authors' reading, 9 under the text reading",
     "15": "the authors': 3 answers drawn per level, aggregated over the question's 5 levels (15 intervals)",
     "9": "the paper's §5.4.1: 9 answers drawn among the question's answers at every level"},
    help="Intervals per aggregate in the mixed-confidence setting (Table 6).")
REPORT_OPTIONS = {"reading": READING, "mixed_intervals": MIXED_INTERVALS}


def mixed_intervals(reading: str, chosen: str) -> int:
    """The intervals per mixed-setting aggregate: ``chosen``, or by default 15 (authors) / 9 (text)."""
    if chosen == "by-reading":
        return 15 if reading == "authors" else 9
    return int(chosen)
