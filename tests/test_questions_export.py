"""Several questions per item in the export, the codebook, the exclusion rules and the report (issue 31 point 5):
each question is its own variable."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.utils import timezone

from analysis.codebook import codebook
from analysis.exclusions import compute_exclusions
from analysis.exports import export_rows, study_layout
from analysis.reports.generic import QuestionsSection, build
from surveys.definition.loader import load_file
from surveys.models import Assignment, Participant, Response, Study

EXAMPLE = Path(__file__).resolve().parent.parent / "studies" / "examples" / "advice-estimates" / "study.toml"


def answered(study: Study, pid: str, pages: list[tuple[float, float | None]], cell: str = "doctor-gain") -> Participant:
    """A completed participant who answered ``sure`` and ``chance`` (None: left out) on the first items."""
    now = timezone.now()
    participant = Participant.objects.create(study=study, prolific_pid=pid, started_at=now, condition=cell)
    for position, (item, (sure, chance)) in enumerate(zip(study.main_items().order_by("key"), pages), start=1):
        slot = Assignment.objects.create(participant=participant, item=item, position=position)
        Response.objects.create(assignment=slot, participant=participant, item=item, question="sure", value=sure,
                                raw=f"{sure:g}", time_taken_ms=5000)
        if chance is not None:
            Response.objects.create(assignment=slot, participant=participant, item=item, question="chance",
                                    value=chance, raw=f"{chance:g}", time_taken_ms=5000)
    participant.status, participant.completed_at = Participant.Status.COMPLETED, now
    participant.save(update_fields=["status", "completed_at"])
    return participant


@pytest.fixture
def study(db):
    return load_file(EXAMPLE).study


def test_each_answer_row_names_its_question_and_is_binned_by_its_scale(study):
    answered(study, "A1", [(6, 85), (2, 15), (4, None)])
    layout = study_layout(study)
    at = {name: i for i, name in enumerate(layout.columns)}
    rows = list(export_rows(study, layout=layout))
    seen = sorted((r[at["item_key"]], r[at["question"]], r[at["value"]], r[at["bin"]]) for r in rows)
    keys = [i.key for i in study.main_items().order_by("key")][:3]
    assert seen == sorted([(keys[0], "sure", 6.0, 6.0), (keys[0], "chance", 85.0, 85.0),
                           (keys[1], "sure", 2.0, 2.0), (keys[1], "chance", 15.0, 15.0), (keys[2], "sure", 4.0, 4.0)])
    assert all(r[at["item.speaker" if "item.speaker" in at else "item.phrase"]] for r in rows)


def test_the_codebook_gives_each_questions_wording_shape_and_labels(study):
    entries = {c.name: c for c in codebook(study)}
    question = entries["question"]
    assert question.values == "sure | chance"
    labels = dict(question.labels)
    assert labels["sure"].startswith("How sure does {{ condition.speaker }} sound? (scale: value 1–7")
    assert "chance" in labels and "0–100" in labels["chance"] and "100 = all of them" in labels["chance"]
    value = entries["value"]
    assert value.values.startswith("sure: 1–7 in steps of 1; labels: 1 = Not at all sure")
    assert "chance: 0–100 in steps of 1; labels: 0 = never, 50 = half of them, 100 = all of them" in value.values
    assert ("sure: 7", "Completely sure") in value.labels and ("chance: 50", "half of them") in value.labels


def test_a_one_question_study_keeps_its_question_column():
    from analysis.export_columns import SINGLE_QUESTION

    assert SINGLE_QUESTION == "answer"


@pytest.mark.django_db
def test_a_one_question_studys_export_says_answer(tmp_path):
    hedged = load_file(EXAMPLE.parent.parent / "hedged-advice" / "study.toml").study
    now = timezone.now()
    participant = Participant.objects.create(study=hedged, prolific_pid="S1", started_at=now)
    item = hedged.main_items().first()
    slot = Assignment.objects.create(participant=participant, item=item, position=1)
    Response.objects.create(assignment=slot, participant=participant, item=item, value=5, raw="5")
    layout = study_layout(hedged)
    (row,) = list(export_rows(hedged, layout=layout))
    assert row[layout.columns.index("question")] == "answer"
    assert dict((c.name, c.values) for c in codebook(hedged))["question"] == "answer"


def test_straight_lining_is_judged_per_question(study):
    varied = [(1, 50), (4, 50), (7, 50), (2, 50)]  # the same estimate every time, varied ratings
    liner = answered(study, "L1", varied)
    fine = answered(study, "F1", [(1, 10), (4, 60), (7, 90), (2, 30)], cell="friend-loss")
    result = compute_exclusions(study)
    assert liner.pk in result.excluded and fine.pk not in result.excluded
    assert any(r["rule"] == "straight-lining" and "(chance)" in r["detail"] for r in result.reasons[liner.pk])


def test_the_report_shows_each_question_separately(study):
    answered(study, "R1", [(6, 80), (3, 20), (5, 60)])
    answered(study, "R2", [(5, 70), (2, 10), (6, 75)], cell="friend-gain")
    section = build(study)
    assert isinstance(section, QuestionsSection)
    summary = section.tables()["generic_summary"]
    assert summary.columns[0] == "question" and set(summary["question"]) == {"sure", "chance"}
    means = summary.set_index("question")["mean"] if "mean" in summary.columns else None
    if means is not None:
        assert means.loc["chance"].max() > 7  # the 0–100 answers are not on the 1–7 scale
    assert "each question separately" in section.titles["generic_summary"]
    assert section.meta()["answer"].startswith("sure: scale") and "chance: scale" in section.meta()["answer"]
    assert {name.rsplit("-", 1)[-1] for name, _ in section.figures()} == {"sure", "chance"}
