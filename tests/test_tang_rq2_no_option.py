"""Tang et al. RQ2 (issue 33): a CoT answer that names no option ("I choose: If one additional score …") is, under
the authors' reading, an answer of conveyed probability 0 — below the least probable option, as the authors' lookup
``{"A": …, "B": …, "C": …}.get(letter, 0)`` gives — not option A; the report counts such answers."""
from __future__ import annotations

import numpy as np
import pytest

from analysis.model_answer_import import ModelAnswerFile, import_model_answers
from analysis.reports import build_report
from families.tang.importer_rq2 import interval_text
from test_tang_rq2_report import rq2_study

pytestmark = pytest.mark.django_db

# The authors' CoT answer with no option letter after "I choose:" (rq2_cot_result.txt, score scenario).
NO_LETTER = ("The scores below 73 are none of the 20.\n\nI choose: If one additional score was randomly picked from "
             "the same population, the score is maybe below {low}")
RULE = ("CoT answers with no option letter after \"I choose:\", counted as naming no option (conveyed probability "
        "0, below the least probable option)")


def authors_line(number: int, item, answer: str) -> str:
    """One line as rq2_cot_result.txt writes it (a Python dict literal; index 3 = score, 3 choices)."""
    e = item.extra
    return repr({"id": number, "mean_std": (int(e["mu"]), int(e["sigma"])), "ci": e["confidence"],
                 "interval": interval_text(e), "index": 3, "answer": answer})


def test_a_cot_answer_naming_no_option_conveys_probability_0(tmp_path):
    study = rq2_study("rq2none", "--numbers", "paper")  # the authors' reading
    items = sorted((i for i in study.main_items() if i.key.startswith("score|3|narrow|") and i.key.endswith("|below_low")),
                   key=lambda i: i.extra["confidence"])
    truths = [i.extra["truth_choice"] for i in items]
    assert len(items) == 5 and truths[:3] == ["B", "C", "C"], truths  # the sequence this test needs
    # the ground truth at every point but the second, where the answer names no option
    answers = [f"So it is that.\n\nI choose: {t}." for t in truths]
    answers[1] = NO_LETTER.format(low=items[1].extra["low"])
    path = tmp_path / "rq2_cot_result.txt"
    path.write_text("\n".join(authors_line(n, i, a) for n, (i, a) in enumerate(zip(items, answers))) + "\n",
                    encoding="utf-8")
    import_model_answers(study, path, ModelAnswerFile(model="gpt-4-0613", shape="tang-rq2", prompt_style="cot"))
    report = build_report(study)
    assert report.meta()["reading"] == "authors"
    assert report.meta()["reading_rules"][RULE] == 1
    # The authors' empirical monotonicity, by their lookup: a step is right when the answers' conveyed
    # probabilities move as the ground truth's do; the second answer conveys 0.
    probability = {"A": 0.8, "B": 0.5, "C": 0.2}
    truth = [probability[t] for t in truths]

    def authors_score(said):
        return np.mean([np.sign(said[j + 1] - said[j]) == np.sign(truth[j + 1] - truth[j]) for j in range(4)]) * 100

    said = [probability.get(a.rsplit("I choose: ", 1)[1][:1], 0) for a in answers]
    scores = report.tables()["consistency"].query("scope == 'overall'").set_index("metric")["score"]
    assert scores["empirical_monotonicity"] == pytest.approx(authors_score(said)) == 75
    # read as A (probability 0.8), B → A rises where the truth falls: a step fewer
    assert authors_score([said[0], 0.8, *said[2:]]) == 50
    assert scores["empirical"] == pytest.approx(80)  # naming no option is never the ground truth
    assert scores["monotonicity"] == 0  # below_low's conveyed probability must not rise: 0.5, 0, 0.2 …
