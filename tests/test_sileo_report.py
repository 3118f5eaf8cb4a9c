"""The Sileo & Moens report section from the database: Table 1 shaped (chance, humans, models), the human
agreement, the likelihood scores' accuracies, the correct-WEP distribution, report.json, CSVs, figures, API."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.utils import timezone

from analysis.reports import build_report
from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from surveys.definition.files import STUDIES_DIR
from surveys.models import Assignment, Participant, Response, Study

pytestmark = pytest.mark.django_db


@pytest.fixture
def vstudy():
    call_command("create_study", "vc", "--instrument", "verbalisation_choice", "--live")
    call_command("generate_items", "vc", "--design", "wep-reasoning", "--hops", "1", "--n", "4", "--seed", "1")
    call_command("generate_items", "vc", "--design", "wep-reasoning", "--hops", "2", "--n", "4", "--seed", "1")
    call_command("import_items", "vc", str(STUDIES_DIR / "sileo" / "wep-unli-triples.csv"))
    return Study.objects.get(slug="vc")


def other(key: str) -> str:
    return "B" if key == "A" else "A"


def model_run(study, mode: str, choose) -> ElicitationRun:
    """A completed run whose answer to each item is ``choose(item)`` (a likelihood run also stores choice_by)."""
    endpoint, _ = ModelEndpoint.objects.get_or_create(name="gemma", base_url="http://127.0.0.1:9/v1", model="g",
                                                      api_style="completions")
    run = ElicitationRun.objects.create(study=study, endpoint=endpoint, mode=mode,
                                        status=ElicitationRun.Status.COMPLETED)
    rows = []
    for item in study.main_items():
        valid = item.extra["valid_key"]
        choice = choose(item)
        detail = None
        if mode == "likelihood":  # raw always right, calibrated always wrong, normalised = the answer
            detail = {"choice_by": {"raw": valid, "normalised": choice, "calibrated": other(valid)}}
        rows.append(ModelResponse(run=run, item=item, answered_at=timezone.now(), choice=choice,
                                  status="ok" if choice else "unparseable", raw_output=choice or "?", detail=detail))
    ModelResponse.objects.bulk_create(rows)
    return run


def participant(study, pid: str, choose) -> None:
    p = Participant.objects.create(study=study, prolific_pid=pid)
    for position, item in enumerate(study.main_items().order_by("key")):
        slot = Assignment.objects.create(participant=p, item=item, position=position)
        Response.objects.create(assignment=slot, participant=p, item=item, choice=choose(item), raw=choose(item))
    p.status = Participant.Status.COMPLETED
    p.completed_at = timezone.now()
    p.save()


def test_no_answers_yet_is_a_clear_reason(vstudy):
    assert "no answers yet" in build_report(vstudy).skipped["sileo"]


def test_table1_agreement_likelihood_and_weps(vstudy, tmp_path, client, admin_user):
    keys = {i.pk: i.extra["valid_key"] for i in vstudy.main_items()}
    # greedy: right on the reasoning items, wrong on UNLI; likelihood: right on the items of index 0 only
    model_run(vstudy, "greedy", lambda i: keys[i.pk] if i.extra["dataset"] != "wep-unli" else other(keys[i.pk]))
    model_run(vstudy, "likelihood", lambda i: keys[i.pk] if i.key.endswith("00000") else other(keys[i.pk]))
    # two participants: h1 always right; h2 right except on 2-hop items (where they disagree with h1)
    participant(vstudy, "h1", lambda i: keys[i.pk])
    participant(vstudy, "h2", lambda i: other(keys[i.pk]) if i.extra["dataset"] == "wep-reasoning-2hops"
                else keys[i.pk])
    report = build_report(vstudy)
    assert list(report.sections) == ["sileo", "generic"]
    t1 = report.tables()["sileo_table1"].set_index("agent")
    assert t1.index.tolist() == ["Chance", "Human baseline", "gemma (greedy)", "gemma (likelihood)"]
    assert t1.loc["Chance", "WEP-UNLI"] == 50
    assert t1.loc["Human baseline", ["WEP-Reasoning (1 hop)", "WEP-Reasoning (2 hops)", "WEP-UNLI"]].tolist() == \
        [100, 50, 100]
    assert t1.loc["gemma (greedy)", ["WEP-Reasoning (1 hop)", "WEP-Reasoning (2 hops)", "WEP-UNLI"]].tolist() == \
        [100, 100, 0]
    # likelihood: one of 4 reasoning items per hop count (index 0), no UNLI item (keys unli-01…)
    assert t1.loc["gemma (likelihood)", ["WEP-Reasoning (1 hop)", "WEP-Reasoning (2 hops)", "WEP-UNLI"]].tolist() == \
        [25, 25, 0]
    assert t1.loc["Human baseline", "WEP-UNLI CI"].endswith("(n=32)")
    agreement = report.tables()["sileo_agreement"].set_index("dataset")
    one_hop_keys = {i.extra["valid_key"] for i in vstudy.main_items() if i.extra["dataset"] == "wep-reasoning-1hop"}
    assert one_hop_keys == {"A", "B"}  # both options valid somewhere: P_e < 1
    assert agreement.loc["wep-reasoning-1hop", "kappa"] == pytest.approx(1.0)  # the two always agree
    # 2 hops: the two always disagree → P̄ = 0, κ < 0
    assert agreement.loc["wep-reasoning-2hops", "kappa"] < 0
    likelihood = report.tables()["sileo_likelihood"].set_index(["dataset", "score"])
    assert likelihood.loc[("wep-unli", "raw"), "accuracy"] == 100
    assert likelihood.loc[("wep-unli", "calibrated"), "accuracy"] == 0
    assert likelihood.loc[("wep-reasoning-1hop", "normalised"), "accuracy"] == 25
    assert likelihood.loc[("wep-unli", "normalised"), "decides"] and not likelihood.loc[("wep-unli", "raw"), "decides"]
    weps = report.tables()["sileo_correct_weps"]
    assert weps.groupby("dataset")["items"].sum().to_dict() == {"wep-reasoning-1hop": 4, "wep-reasoning-2hops": 4,
                                                                "wep-unli": 16}
    assert weps.groupby("dataset")["frequency"].sum().round(6).eq(100).all()
    assert report.meta()["likelihood_decides"] == "normalised"
    # files: report.json, one CSV per table, both figures
    written = {p.name for p in report.write(tmp_path)}
    assert {"report.json", "sileo_table1.csv", "sileo_correct_weps.csv", "sileo-accuracy.png",
            "sileo-correct-weps.svg"} <= written
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["meta"]["figures"] == ["sileo-accuracy", "sileo-correct-weps", "generic-all-items"]
    assert data["tables"]["sileo_table1"][0]["agent"] == "Chance"
    assert "decided by the normalised score" in report.summary_text()
    # the API and the admin page show the same report
    client.force_login(admin_user)
    api = client.get("/api/studies/vc/report/").json()
    assert [r["agent"] for r in api["tables"]["sileo_table1"]] == t1.index.tolist()
    page = client.get(f"/admin/analysis/studyanalysis/{vstudy.pk}/report/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Sileo &amp; Moens Table 1" in html and "gemma (likelihood)" in html and "data:image/png" in html


def test_report_command_writes_the_files(vstudy, tmp_path, capsys):
    model_run(vstudy, "greedy", lambda i: i.extra["valid_key"])
    call_command("report", "vc", "--out", str(tmp_path))
    assert (tmp_path / "sileo_table1.csv").exists() and (tmp_path / "sileo-correct-weps.png").exists()
    assert "Sileo & Moens Table 1" in capsys.readouterr().out
