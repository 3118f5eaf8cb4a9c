"""Declared exclusion rules ([[exclusions]]; surveys/definition/exclusion_rules.py, analysis/exclusions.py): each rule
excludes whom it should and names why, the decisions are stored only by the explicit step, the report opens with
the participant flow, the export carries the decision and its reasons, and a rule the study's answers cannot feed
is refused when the file is checked."""
from __future__ import annotations

import io
from datetime import timedelta

import pandas as pd
import pytest
from django.core.management import call_command
from django.utils import timezone

from analysis.exclusions import apply_exclusions, compute_exclusions, declared_rules
from analysis.exports import current_decisions, export_rows, study_layout
from analysis.metrics import exclusion as measures
from analysis.reports import build_report
from surveys.definition.errors import DefinitionError
from surveys.definition.loader import load
from surveys.models import Assignment, CheckAnswer, ExclusionDecision, Participant, Response, Study

from test_checks import BASE, CHECKS, ITEMS

RULES = """
[[exclusions]]
rule = "failed-checks"
at_least = 2
[[exclusions]]
rule = "too-fast"
total_seconds = 60
[[exclusions]]
rule = "straight-lining"
percent = 100
"""


def load_text(text: str, **options):
    return load(text, "study.toml", lambda name: ITEMS.encode(), **options)


def person(study: Study, pid: str, values: list[int], seconds: float, failed: int = 0,
           status: str = "completed") -> Participant:
    start = timezone.now() - timedelta(hours=1)
    p = Participant.objects.create(study=study, prolific_pid=pid, started_at=start)
    for position, (item, value) in enumerate(zip(study.main_items().order_by("key"), values), start=1):
        slot = Assignment.objects.create(participant=p, item=item, position=position)
        Response.objects.create(assignment=slot, participant=p, item=item, value=value, time_taken_ms=5000)
    for n, key in enumerate(["imc", "swim"]):
        CheckAnswer.objects.create(participant=p, check_key=key, after_item=2, answered_at=timezone.now(),
                                   value=1 if key == "imc" else None, choice="" if key == "imc" else "sd",
                                   passed=n >= failed)
    if status == "completed":  # answers are saved while started (the database's trigger), then completed
        Participant.objects.filter(pk=p.pk).update(status=status, completed_at=start + timedelta(seconds=seconds))
    return p


@pytest.fixture
def study(db):
    s = load_text(BASE + CHECKS + RULES).study
    person(s, "good", [1, 4, 6, 2, 5, 3], 600)
    person(s, "fast", [1, 4, 6, 2, 5, 3], 30)
    person(s, "flat", [4, 4, 4, 4, 4, 4], 600)
    person(s, "careless", [2, 3, 4, 5, 6, 7], 600, failed=2)
    person(s, "all-wrong", [7, 7, 7, 7, 7, 7], 20, failed=2)
    person(s, "halfway", [3, 3], 0, status="started")
    return s


def test_each_rule_excludes_whom_it_should_and_says_why(study):
    result = compute_exclusions(study)
    pid = {p.pk: p.prolific_pid for p in Participant.objects.filter(study=study)}
    why = {pid[pk]: [r["rule"] for r in reasons] for pk, reasons in result.reasons.items()}
    assert why == {"good": [], "fast": ["too-fast"], "flat": ["straight-lining"], "careless": ["failed-checks"],
                   "all-wrong": ["failed-checks", "too-fast", "straight-lining"]}
    detail = {pid[pk]: reasons for pk, reasons in result.reasons.items()}
    assert detail["fast"][0]["detail"] == "30.0 s in total"
    assert detail["careless"][0]["detail"] == "2 failed check(s)"
    assert (result.entered, result.completed, result.analysed) == (6, 5, 1)
    flow = dict(zip(result.flow()["step"], result.flow()["participants"]))
    assert flow == {"entered": 6, "completed": 5, "excluded by failed-checks (at_least = 2)": 2,
                    "excluded by too-fast (total_seconds = 60)": 2,
                    "excluded by straight-lining (percent = 100, min_items = 3)": 2,
                    "excluded by any rule": 4, "analysed": 1}
    assert not ExclusionDecision.objects.exists()  # computing stores nothing


def test_decisions_are_stored_by_the_explicit_step_with_their_reasons(study):
    out = io.StringIO()
    call_command("exclusions", "checked", stdout=out)
    text = out.getvalue()
    assert "checked: 1 of 5 completed participants kept; 4 excluded" in text
    assert "rule too-fast (total_seconds = 60): 2 excluded" in text
    stored = {d.participant.prolific_pid: d for d in ExclusionDecision.objects.select_related("participant")}
    assert set(stored) == {"good", "fast", "flat", "careless", "all-wrong"}  # the completed ones
    assert stored["good"].excluded is False and stored["good"].reasons == []
    assert [r["rule"] for r in stored["all-wrong"].reasons] == ["failed-checks", "too-fast", "straight-lining"]
    assert stored["flat"].rules[2] == {"rule": "straight-lining", "params": {"percent": 100.0, "min_items": 3}}
    # a second run replaces the decisions, never adds to them
    apply_exclusions(study)
    assert ExclusionDecision.objects.count() == 5


def test_the_report_opens_with_the_flow_and_leaves_the_excluded_out(study):
    report = build_report(study)
    tables = report.tables()
    assert list(tables)[0] == "exclusion_flow"
    flow = tables["exclusion_flow"]
    assert flow.iloc[-1].tolist() == ["analysed", 1]
    assert report.section("generic").humans == 1


def test_the_export_carries_the_decision_and_its_reasons(study):
    layout = study_layout(study)
    rows = [dict(zip(layout.columns, row)) for row in export_rows(study, decisions=current_decisions(study))]
    pid = {p.pk: p.prolific_pid for p in Participant.objects.filter(study=study)}
    by_person = {}
    for row in rows:
        by_person.setdefault(row["respondent_id"], set()).add((row["included"], row["excluded_by"]))
    assert all(len(v) == 1 for v in by_person.values())  # participant-level: the same on each of their rows
    decisions = {v for values in by_person.values() for v in values}
    assert (True, None) in decisions
    assert (False, "too-fast: 30.0 s in total") in decisions
    assert (False, "failed-checks: 2 failed check(s); too-fast: 20.0 s in total; "
                   "straight-lining: 100 % the same answer") in decisions
    assert len(pid) == 6


def test_an_existing_belem_study_keeps_its_filter_as_the_belem_rule(imported_nv):
    assert declared_rules(imported_nv) == [("belem-ranking", {"threshold": 0.2})]
    imported_nv.attention_filter = False
    assert declared_rules(imported_nv) == []


def problems(text: str) -> list[str]:
    with pytest.raises(DefinitionError) as caught:
        load_text(text, commit=False)
    return [f"{p.where}: {p.message}" for p in caught.value.problems]


@pytest.mark.django_db
@pytest.mark.parametrize("body, where, words", [
    ('rule = "failed-checks"', "exclusions[0].rule", "needs [[checks]]"),
    ('rule = "belem-ranking"', "exclusions[0].rule", "no `expression`"),
    ('rule = "too-fast"', "exclusions[0]", "exactly one of total_seconds or median_item_seconds"),
    ('rule = "straight-lining"\npercent = 150', "exclusions[0]", "percent must be in 1–100"),
    ('rule = "missing-answers"\npercent = 10\nthreshold = 0.3', "exclusions[0]", "takes no 'threshold'"),
    ('rule = "too-quick"', "exclusions[0].rule", "failed-checks"),
])
def test_a_rule_the_study_cannot_feed_is_refused_naming_its_key(body, where, words):
    found = problems(BASE + "[[exclusions]]\n" + body + "\n")
    assert any(f.startswith(where) and words in f for f in found), found


@pytest.mark.django_db
def test_straight_lining_needs_answers_that_can_repeat_and_the_filter_needs_expressions():
    free = BASE.replace('shape = "scale"\nmin = 1\nmax = 7\n[answer.labels]\n1 = "Strongly disagree"\n'
                        '7 = "Strongly agree"\n', 'shape = "free_text"\n')
    found = problems(free + '[[exclusions]]\nrule = "straight-lining"\npercent = 90\n')
    assert any(f.startswith("exclusions[0].rule") and "'free_text'" in f for f in found), found
    found = problems(BASE.replace("[participants]\n", "[participants]\nattention_filter = true\n"))
    assert any(f.startswith("participants.attention_filter") for f in found), found


def test_measures_on_their_own():
    answers = pd.DataFrame({"respondent": [1, 1, 1, 1, 2, 2, 2, 3], "answer": [4, 4, 4, 5, 1, 2, 3, 4]})
    table = measures.straight_lining(answers, percent=75)
    assert table.loc[1, "measure"] == 75 and table.loc[1, "excluded"]
    assert not table.loc[2, "excluded"] and pd.isna(table.loc[3, "measure"]) and not table.loc[3, "excluded"]
    people = pd.DataFrame({"respondent": [1, 2], "total_seconds": [50.0, float("nan")]})
    times = pd.DataFrame({"respondent": [1, 1, 1, 2], "time_taken_ms": [1000, 2000, 9000, 500]})
    by_median = measures.too_fast(people, times, median_item_seconds=2.5)
    assert by_median["excluded"].tolist() == [True, True] and by_median.loc[1, "measure"] == 2.0
    by_total = measures.too_fast(people, times, total_seconds=60)
    assert by_total["excluded"].tolist() == [True, False]  # an unknown time is never "too fast"
    slots = pd.DataFrame({"respondent": [1, 2], "slots": [10, 10], "answered": [7, 10]})
    assert measures.missing_answers(slots, percent=20)["excluded"].tolist() == [True, False]
