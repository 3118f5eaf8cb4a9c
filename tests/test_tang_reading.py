"""Tang et al. RQ2: the authors' reading of answers beside the Methods' text reading, as a study report option."""
from __future__ import annotations

import pandas as pd
import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from families.tang.metrics.consistency import reversed_pairs, unit_scores
from families.tang.metrics.reading import authors_choices, cot_letter, standard_first_option
from analysis.reports import build_report
from test_tang_rq2_report import answer_run, rq2_study


def test_a_standard_answer_is_the_first_option_letter_it_writes():
    assert standard_first_option("A.is likely to be B.is maybe C.is unlikely to be.", 3) == "A"
    assert standard_first_option("A.is unlikely to be B.is maybe C.is likely to be\n\nThe correct ...", 3) == "A"
    assert standard_first_option("A.is likely to be\nB.is maybe\nC.is unlikely to be", 3) == "A"
    assert standard_first_option("A.is unlikely to be", 3) == "A"  # the letter wins over the phrase (C's)
    assert standard_first_option("D.is unlikely to be", 5) == "D"
    assert standard_first_option("D.is unlikely to be", 3) is None  # not a letter of the set
    assert standard_first_option("is likely to be", 5) is None


def test_a_cot_answer_is_the_letter_right_after_i_choose():
    assert cot_letter("... 12/20 = 0.6.\n\nI choose: B. is likely to be.", 5) == "B"
    assert cot_letter("So 40%.\n\nI choose: C.", 5) == "C"
    assert cot_letter("I choose: A.is likely to be.", 3) == "A"
    assert cot_letter('I choose: "is likely to be"', 5) is None  # a phrase, no letter
    assert cot_letter("I choose: Almost certainly", 5) is None   # a word, not a letter
    assert cot_letter("I choose: D.is unlikely to be.", 3) is None  # not a letter of the 3-choice set
    assert cot_letter("The answer is B.", 5) is None  # no "I choose:"


def test_authors_choices_and_what_each_rule_touched():
    raw = pd.Series(["A.is unlikely to be B.is maybe C.is likely to be", "C.is unlikely to be",
                     "I choose: B. is maybe", "I choose: is likely to be", "Hmm. I choose: A.is almost certainly"])
    style = pd.Series(["standard", "standard", "cot", "cot", "cot"])
    choices = pd.Series([3, 3, 3, 5, 5])
    text = pd.Series([None, "C", "B", "B", "A"])  # the text reading: unreadable, C, B, B (the phrase), A
    read = authors_choices(raw, style, choices, text)
    assert read.choice.tolist() == ["A", "C", "B", "none", "A"]  # no letter after "I choose:": no option
    assert read.counts == {"standard_first": 1, "cot_letter": 0, "cot_none": 1}


def pair_rows(first: str, second: str) -> pd.DataFrame:
    """One 3-choice complementary pair (below low, above low) and the ground truth."""
    return pd.DataFrame([
        {"agent": "m", "scenario": "height", "choices": 3, "numbers": "narrow", "confidence": 0.05,
         "interval": interval, "choice": letter, "truth_choice": "B"}
        for interval, letter in (("below_low", first), ("above_low", second))])


def test_the_pair_unlikely_likely_in_that_order_is_not_complementary_under_the_authors_reading():
    def pairwise(df, reading):
        units = unit_scores(df, reading)
        return units.loc[units["metric"] == "pairwise", "correct"].tolist()

    assert pairwise(pair_rows("C", "A"), "text") == [1.0]     # Methods: regardless of order
    assert pairwise(pair_rows("C", "A"), "authors") == [0.0]  # the authors' code
    assert pairwise(pair_rows("A", "C"), "authors") == [1.0]
    assert pairwise(pair_rows("B", "B"), "authors") == [1.0]
    assert reversed_pairs(pair_rows("C", "A")) == 1 and reversed_pairs(pair_rows("A", "C")) == 0
    with pytest.raises(ValueError, match="unknown reading"):
        unit_scores(pair_rows("A", "C"), "other")


@pytest.fixture
def rq2(db):
    return rq2_study("rq2r")


def test_reading_is_a_study_report_option_named_in_the_report(rq2, tmp_path, capsys):
    assert rq2.report_option("reading") == "text"  # default for a new study
    # standard: every answer lists the 3 or 5 options (unreadable as text; the first, A, for the authors);
    # CoT: "I choose:" followed by a phrase (read as text; no option, probability 0, for the authors)
    lists = {3: "A.is likely to be B.is maybe C.is unlikely to be", 5: "A.is almost certainly B.is likely to be "
             "C.is maybe D.is unlikely to be E.is almost certainly not"}
    answer_run(rq2, "standard", lambda i: lists[i.extra["choices"]])
    answer_run(rq2, "cot", lambda i: "It is 50%. I choose: is maybe")
    text = build_report(rq2)
    assert text.meta()["reading"] == "text" and 'reading = "text"' in text.titles()["consistency"]
    rules = text.meta()["reading_rules"]
    assert rules["standard answers read by the first option letter they write (a list of the options, or a "
                 "letter with another option's phrase) where the text reading differs"] == 360
    overall = text.tables()["consistency"].query("scope == 'overall'").set_index(["agent", "metric"])["score"]
    assert overall[("gpt (greedy)", "empirical")] == 0  # unreadable
    assert overall[("gpt (greedy)", "monotonicity")] == 0
    # the report command stores the option on the study
    call_command("report", "rq2r", "--option", "reading=authors", "--no-figures", "--out", str(tmp_path))
    printed = capsys.readouterr().out
    assert "report options of rq2r: reading=authors" in printed
    assert "Tang RQ2 reading: authors (the authors' code)" in printed
    rq2.refresh_from_db()
    assert rq2.report_options == {"reading": "authors"}
    authors = build_report(rq2)
    assert authors.meta()["reading"] == "authors" and "the authors' code" in authors.titles()["consistency_tests"]
    assert authors.meta()["reading_rules"]["CoT answers with no option letter after \"I choose:\", counted as "
                                           "naming no option (conveyed probability 0, below the least probable "
                                           "option)"] == 360
    overall = authors.tables()["consistency"].query("scope == 'overall'").set_index(["agent", "metric"])["score"]
    assert overall[("gpt (greedy)", "monotonicity")] == 100  # always A: monotone with ties
    assert overall[("gpt (greedy, cot)", "monotonicity")] == 100  # always no option: constant
    assert overall[("gpt (greedy, cot)", "pairwise")] == 0  # no option is never half of a complementary pair
    assert overall[("gpt (greedy, cot)", "empirical")] == 0  # nor the ground truth


def test_unknown_report_options_are_refused(rq2):
    with pytest.raises(CommandError, match="must be one of text, authors"):
        call_command("report", "rq2r", "--option", "reading=paper")
    with pytest.raises(CommandError, match="unknown report option 'colour'"):
        call_command("report", "rq2r", "--option", "colour=red")
    rq2.refresh_from_db()
    assert rq2.report_options == {}
    rq2.report_options = {"reading": "nope"}
    with pytest.raises(ValidationError, match="must be one of"):
        rq2.full_clean()


def test_the_admin_shows_the_report_options(rq2, admin_client):
    page = admin_client.get(f"/admin/surveys/study/{rq2.pk}/change/")
    assert page.status_code == 200
    assert 'name="report_options"' in page.content.decode() and "reading" in page.content.decode()
