"""The generic report section from the database (analysis/reports/generic.py): a researcher's 1–7 scale with two
conditions and a questionnaire, choice and interval studies, a models-only study; and the report's rule about
definition versions (analysis/versions.py) through the command, the API and the admin page."""
from __future__ import annotations

import io
import json
import math

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token

from analysis.metrics.generic import EMPTY_BIN
from analysis.reports import build_report
from analysis.versions import VersionsError
from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from surveys.models import Assignment, Item, Participant, Response, Study, StudyVersion

pytestmark = pytest.mark.django_db

SCALE_DEFINITION = {
    "answer": {"shape": "scale", "min": 1, "max": 7, "step": 1},
    "questionnaire": [{"name": "gender", "label": "Gender", "type": "choice", "choices": ["f", "m"]},
                      {"name": "age", "label": "Age", "type": "number", "integer": True},
                      {"name": "comment", "label": "Comment", "type": "text", "required": False}],
    "report": {"sections": ["generic"], "group_by": ["condition", "gender"]},
}
# item → answers of P1, P2, P3 (the humans), T (a test participant), the model
ANSWERS = {"a1": (1, 2, 3, 7, 2), "a2": (2, 2, 1, 7, 2), "b1": (7, 5, 6, 7, 6), "b2": (6, 5, 7, 7, 6)}
PEOPLE = {"P1": {"gender": "f", "age": 30}, "P2": {"gender": "m", "age": 40}, "P3": {"gender": "f", "age": 50}}


def make_study(slug="own", definition=None, instrument="wep_probability", items=("a1", "a2", "b1", "b2"),
               **item_fields) -> Study:
    study = Study.objects.create(slug=slug, title=f"Study {slug}", instrument=instrument,
                                 definition=definition if definition is not None else SCALE_DEFINITION)
    for key in items:
        Item.objects.create(study=study, key=key, statement=f"Statement {key}",
                            extra={"condition": key[0].upper(), **item_fields.get(key, {})})
    return study


def person(study, pid, answer, questionnaire=None, is_test=False, complete=True, version=None) -> Participant:
    """A participant answering every item with ``answer(item)`` (a dict of answer columns)."""
    participant = Participant.objects.create(study=study, prolific_pid=pid, is_test=is_test,
                                             questionnaire=questionnaire or {}, study_version=version)
    for position, item in enumerate(study.main_items().order_by("id"), start=1):
        slot = Assignment.objects.create(participant=participant, item=item, position=position)
        Response.objects.create(assignment=slot, participant=participant, item=item, **answer(item))
    if complete:
        participant.status, participant.completed_at = Participant.Status.COMPLETED, timezone.now()
        participant.save()
    return participant


def model_run(study, answer, version=None, name="gpt") -> ElicitationRun:
    endpoint, _ = ModelEndpoint.objects.get_or_create(name=name, base_url="http://127.0.0.1:9/v1", model=name)
    run = ElicitationRun.objects.create(study=study, endpoint=endpoint, status=ElicitationRun.Status.COMPLETED,
                                        study_version=version)
    ModelResponse.objects.bulk_create([
        ModelResponse(run=run, item=item, raw_output="x", answered_at=timezone.now(), status="ok", **answer(item))
        for item in study.main_items()])
    return run


@pytest.fixture
def scale_study():
    study = make_study()
    for i, (pid, questionnaire) in enumerate(PEOPLE.items()):
        person(study, pid, lambda item, i=i: {"value": ANSWERS[item.key][i]}, questionnaire)
    person(study, "T", lambda item: {"value": ANSWERS[item.key][3]}, {"gender": "m"}, is_test=True)
    person(study, "S", lambda item: {"value": 7}, {"gender": "m"}, complete=False)
    model_run(study, lambda item: {"value": ANSWERS[item.key][4]})
    return study


def test_scale_study_each_agent_beside_the_humans_per_condition(scale_study, tmp_path):
    report = build_report(scale_study)
    assert list(report.sections) == ["generic"]
    section = report.section("generic")
    assert section.humans == 3  # the test participant and the unfinished one are left out
    summary = report.tables()["generic_summary"].set_index(["condition", "agent"])
    model = next(a for a in summary.index.get_level_values("agent") if a != "human")
    # condition A: humans 1,2,2,2,3,1 → P(1..3) = 2/6, 3/6, 1/6; the model answers 2, 2 → H(2) = 1
    humans_a = summary.loc[("A", "human")]
    assert humans_a["answers"] == 6 and humans_a["mean"] == pytest.approx(11 / 6) and humans_a["median"] == 2
    a = summary.loc[("A", model)]
    assert a["pa"] == pytest.approx(50) and a["pct_pa"] == pytest.approx(100)
    assert a["wasserstein"] == pytest.approx(1 / 3 + 1 / 6)
    assert a["kl"] == pytest.approx(2 / 6 * math.log(2 / 6 / EMPTY_BIN) + 3 / 6 * math.log(3 / 6)
                                    + 1 / 6 * math.log(1 / 6 / EMPTY_BIN))
    # condition B: humans 7,5,6,5,6,7 → a third each on 5, 6, 7; the model 6, 6
    b = summary.loc[("B", model)]
    assert b["pa"] == pytest.approx(100 / 3) and b["wasserstein"] == pytest.approx(2 / 3)
    distribution = report.tables()["generic_distribution"]
    assert len(distribution) == 2 * 2 * 7 and set(distribution["bin"]) == set(range(1, 8))
    # the questionnaire field named in group_by: the humans by gender against all humans of each condition
    q = report.tables()["generic_questionnaire"].set_index(["field", "condition", "group"])
    assert set(q.index.get_level_values("field")) == {"gender"}
    assert q.loc[("gender", "A", "f"), "mean"] == pytest.approx(7 / 4) and q.loc[("gender", "A", "f"), "answers"] == 4
    assert q.loc[("gender", "A", "m"), "pa"] == pytest.approx(50)  # P2 answers 2, 2
    meta = report.meta()
    assert meta["item_groups_by"] == ["condition"] and meta["questionnaire_fields"] == ["gender"]
    assert any("no model answer carries a persona" in n for n in meta["notes"])
    assert [name for name, _ in report.figures()] == ["generic-condition-a", "generic-condition-b", "generic-by-gender"]
    written = {p.name for p in report.write(tmp_path)}
    assert {"generic_summary.csv", "generic_questionnaire.csv", "generic-condition-a.svg", "report.json"} <= written


def test_every_declared_questionnaire_field_but_text_is_broken_down_without_group_by(scale_study):
    scale_study.definition = {**SCALE_DEFINITION, "report": {"sections": ["generic"]}}
    scale_study.save()
    report = build_report(scale_study)
    q = report.tables()["generic_questionnaire"]
    assert list(dict.fromkeys(q["field"])) == ["gender", "age"]
    assert sorted(set(q.loc[q["field"] == "age", "group"])) == ["30", "40", "50"]
    assert "condition" not in report.tables()["generic_summary"].columns  # one group: all items
    assert [name for name, _ in report.figures()] == ["generic-all-items", "generic-by-gender", "generic-by-age"]


def test_a_group_by_name_that_is_no_field_is_named(scale_study):
    scale_study.definition = {**SCALE_DEFINITION, "report": {"group_by": ["conditon"]}}
    scale_study.save()
    why = build_report(scale_study).skipped["generic"]
    assert "'conditon'" in why and "condition" in why and "gender" in why


def test_models_only_says_no_human_answers_yet(tmp_path):
    study = make_study("pilot")
    model_run(study, lambda item: {"value": 4})
    report = build_report(study)
    summary = report.tables()["generic_summary"]
    assert list(summary["agent"]) == ["gpt (greedy)"] * 2 and summary["mean"].tolist() == [4, 4]
    assert summary[["pa", "wasserstein", "kl"]].isna().all().all()
    assert any("no human answers yet" in note for note in report.notes())
    out = io.StringIO()
    call_command("report", "pilot", "--out", str(tmp_path), stdout=out)
    assert "no human answers yet" in out.getvalue() and (tmp_path / "generic-condition-a.png").exists()
    printed = out.getvalue()  # issue 32 point 10: it said only the summary table; now where every file went
    written = sorted(tmp_path.iterdir())
    assert {p.suffix for p in written} == {".json", ".csv", ".png", ".svg"}
    assert all(str(path) in printed for path in written)
    assert "table   generic_summary" in printed and f"{tmp_path / 'generic_summary.csv'}" in printed
    assert "figure  generic-condition-a" in printed and f"written {len(written)} files to {tmp_path}" in printed


def test_choice_option_shares_majority_and_js_distance():
    definition = {"answer": {"shape": "choice", "options": [{"key": k, "label": k.lower()} for k in "ABC"]},
                  "report": {"sections": ["generic"]}}
    study = make_study("choice", definition, instrument="generic", items=("x1", "x2"))
    person(study, "P1", lambda item: {"choice": "A"})
    person(study, "P2", lambda item: {"choice": "A" if item.key == "x1" else "B"})
    model_run(study, lambda item: {"choice": "B"})
    report = build_report(study)
    summary = report.tables()["generic_summary"].set_index("agent")
    assert summary.loc["human", "human_majority"] == "A"  # A 3/4, B 1/4
    model = summary.loc["gpt (greedy)"]
    assert model["top_option"] == "B" and model["majority_agreement"] == 0
    m = [(0.75 + 0) / 2, (0.25 + 1) / 2]
    js = 0.5 * (0.75 * math.log2(0.75 / m[0]) + 0.25 * math.log2(0.25 / m[1])) + 0.5 * math.log2(1 / m[1])
    assert model["js_distance"] == pytest.approx(math.sqrt(js))
    shares = report.tables()["generic_distribution"]
    assert shares[shares["agent"] == "human"]["share"].tolist() == [0.75, 0.25, 0.0]


def test_interval_width_and_coverage_where_items_carry_a_truth():
    definition = {"answer": {"shape": "interval"}, "report": {"sections": ["generic"]}}
    # the section reads the shape from the definition's [answer] (the kind, here, only words the prompt)
    study = make_study("iv", definition, items=("t1", "t2"), t2={"truth": "12"})
    Item.objects.filter(key="t1").update(ground_truth=5)
    person(study, "P1", lambda item: {"lower": 0, "upper": 10})      # holds 5, not 12
    model_run(study, lambda item: {"lower": 4, "upper": 20})         # holds both
    summary = build_report(study).tables()["generic_summary"].set_index("agent")
    assert summary.loc["human", "mean_width"] == 10 and summary.loc["human", "coverage"] == 0.5
    assert summary.loc["gpt (greedy)", "coverage"] == 1 and summary.loc["gpt (greedy)", "n_truth"] == 2


# --- versions -----------------------------------------------------------------------------------------
@pytest.fixture
def two_versions(scale_study):
    v1 = StudyVersion.objects.create(study=scale_study, number=1, sha256="a" * 64, definition={})
    v2 = StudyVersion.objects.create(study=scale_study, number=2, sha256="b" * 64, definition={})
    Participant.objects.filter(study=scale_study, prolific_pid__in=["P1", "P2"]).update(study_version=v1)
    Participant.objects.filter(study=scale_study, prolific_pid="P3").update(study_version=v2)
    ElicitationRun.objects.filter(study=scale_study).update(study_version=v2)
    return scale_study


def test_answers_of_one_version_are_reported_with_it(scale_study):
    v1 = StudyVersion.objects.create(study=scale_study, number=1, sha256="c" * 64, definition={})
    Participant.objects.filter(study=scale_study).update(study_version=v1)
    ElicitationRun.objects.filter(study=scale_study).update(study_version=v1)
    meta = build_report(scale_study).meta()
    assert [v["version"] for v in meta["versions"]] == ["v1 (cccccccccccc)"] and meta["pooled_versions"] is False
    assert meta["versions"][0]["human_answers"] == 12 and meta["versions"][0]["model_answers"] == 4


def test_answers_of_several_versions_are_refused_unless_pooled(two_versions, tmp_path):
    with pytest.raises(VersionsError) as refused:
        build_report(two_versions)
    message = str(refused.value)
    assert ("v1 (aaaaaaaaaaaa): 8 human and 0 model answers, v2 (bbbbbbbbbbbb): 4 human and 4 model answers, "
            "unversioned: 0 human") not in message  # no unversioned answers here: not listed
    assert "v1 (aaaaaaaaaaaa): 8 human and 0 model answers" in message
    assert "v2 (bbbbbbbbbbbb): 4 human and 4 model answers" in message and "--pool-versions" in message
    pooled = build_report(two_versions, pool_versions=True)
    meta = pooled.meta()
    assert meta["pooled_versions"] is True and len(meta["versions"]) == 2
    assert any(n.startswith("answers of several definition versions are pooled") for n in meta["notes"])
    assert pooled.section("generic").humans == 3


def test_unversioned_answers_are_one_group(scale_study):
    v1 = StudyVersion.objects.create(study=scale_study, number=1, sha256="d" * 64, definition={})
    Participant.objects.filter(study=scale_study, prolific_pid="P1").update(study_version=v1)
    with pytest.raises(VersionsError, match=r"unversioned: 8 human and 4 model answers"):
        build_report(scale_study)


def test_pool_versions_through_the_command_the_api_and_the_admin_page(two_versions, tmp_path, admin_client,
                                                                      admin_user, client):
    with pytest.raises(CommandError, match="2 versions"):
        call_command("report", "own", "--out", str(tmp_path), stdout=io.StringIO())
    out = io.StringIO()
    call_command("report", "own", "--out", str(tmp_path), "--pool-versions", stdout=out)
    assert "pooled" in out.getvalue()
    assert json.loads((tmp_path / "report.json").read_text())["meta"]["pooled_versions"] is True

    token = Token.objects.create(user=admin_user)
    auth = {"HTTP_AUTHORIZATION": f"Token {token.key}"}
    refused = client.get("/api/studies/own/report/", **auth)
    assert refused.status_code == 409 and "v1 (aaaaaaaaaaaa)" in refused.json()["detail"]
    assert client.get("/api/studies/own/report/?pool_versions=1", **auth).json()["meta"]["pooled_versions"] is True

    url = reverse("admin:analysis_studyanalysis_report", args=[two_versions.pk])
    page = admin_client.get(url).content.decode()
    assert 'id="pool-versions"' in page and "v2 (bbbbbbbbbbbb)" in page
    page = admin_client.get(url + "?pool_versions=1").content.decode()
    assert 'id="versions"' in page and "(pooled, as asked)" in page and 'id="figure-generic-condition-a"' in page


# --- a study loaded from a definition file -------------------------------------------------------------
TANG_FILE = """
[study]
slug = "tang-groups"
title = "Tang RQ1 by context"
kind = "wep_probability"

[design]
generator = "tang-rq1"
[design.options]
settings = ["CNC", "ENC"]

[[questionnaire]]
name = "first_language"
label = "Your first language"
type = "choice"
choices = ["en", "zh"]

[report]
group_by = ["context", "first_language"]
"""


def test_a_loaded_definition_groups_by_an_item_field_and_a_questionnaire_field(tmp_path):
    from surveys.definition.loader import load_file

    (tmp_path / "study.toml").write_text(TANG_FILE, encoding="utf-8")
    load_file(tmp_path / "study.toml")
    study = Study.objects.get(slug="tang-groups")
    version = StudyVersion.objects.get(study=study)
    for pid, language in (("P1", "en"), ("P2", "zh")):
        person(study, pid, lambda item: {"value": 70}, {"first_language": language}, version=version)
    model_run(study, lambda item: {"value": 80 if item.context == "CNC" else 70}, version=version)
    report = build_report(study)
    assert list(report.sections)[-1] == "generic"
    summary = report.tables()["generic_summary"].set_index(["context", "agent"])
    assert summary.loc[("CNC", "gpt (greedy)"), "wasserstein"] == 10  # the humans all 70, the model 80
    assert summary.loc[("ENC", "gpt (greedy)"), "pa"] == 100
    q = report.tables()["generic_questionnaire"]
    assert set(q["group"]) == {"en", "zh"} and set(q["context"]) == {"CNC", "ENC"}
    assert report.meta()["versions"][0]["version"] == f"v1 ({version.sha256[:12]})"
    names = [name for name, _ in report.figures()]
    assert {"generic-context-cnc", "generic-context-enc", "generic-by-first_language"} <= set(names)


def test_the_report_table_of_a_definition_refuses_unknown_sections_and_repeated_fields():
    from pydantic import ValidationError

    from surveys.definition.schema import ReportTable

    assert ReportTable.model_validate({"sections": ["generic", "belem", "generic"]}).sections == ["generic", "belem"]
    with pytest.raises(ValidationError, match="unknown report section.*'genric'"):
        ReportTable.model_validate({"sections": ["genric"]})
    with pytest.raises(ValidationError, match="'condition' more than once"):
        ReportTable.model_validate({"group_by": ["condition", "condition"]})


def test_the_attention_filter_keeps_out_whom_the_family_section_excludes(imported_nv, belem_dir):
    from test_analysis_factories import nv_and_v

    nv, _ = nv_and_v(imported_nv, belem_dir)
    report = build_report(nv)
    generic = report.section("generic")
    kept = report.section("belem").attention[0].included
    assert nv.applies_attention_filter and generic.humans == kept == 12  # the contrarian and the constant one out
    assert "Spearman" in generic.meta()["attention"]
    assert set(generic.answers.loc[generic.answers["agent"] != "human", "agent"]) == {
        "modelx (greedy)", "logprobs (top_logprobs)"}
