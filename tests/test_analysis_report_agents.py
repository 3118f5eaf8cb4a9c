"""Which runs the report uses and how it names them: one agent per model configuration, lined up across the
non-verifiable and verifiable sets (several runs of one agent: the latest complete one is used); partial runs
flagged as not comparable; the wording of each set per instrument."""
from __future__ import annotations

import json
from collections import defaultdict

import matplotlib.pyplot as plt
import numpy as np
import pytest
from django.urls import reverse

from analysis.agents import agent_name, choose_runs
from families.belem.figures import report_figures
from families.belem.attention import apply_attention_filter
from analysis.reports import build_report
from elicitation.models import ElicitationRun
from surveys.models import Study
from test_analysis_factories import add_run, endpoint, model_value, nv_and_v, subset
from test_analysis_report import by_hand_reference


@pytest.fixture
def studies(imported_nv, belem_dir):
    return nv_and_v(imported_nv, belem_dir)


def greedy_pa(study: Study, run: ElicitationRun, reference: dict[str, np.ndarray]) -> float:
    """PA of one run's answers by hand (mean over expressions of the mean P(bin|u) of its answers), ×100."""
    per_u: dict[str, list[float]] = defaultdict(list)
    for r in run.responses.select_related("item").filter(item__is_control=False, value__isnull=False):
        per_u[r.item.expression].append(reference[r.item.expression][int(r.value // 5)])
    return float(np.mean([np.mean(v) for v in per_u.values()]) * 100)


def test_agent_names_leave_out_the_run_and_keep_what_changes_the_answers(db):
    study = Study.objects.create(slug="s", title="S")
    ep = endpoint("stub")
    def run(**kw):
        return ElicitationRun(study=study, endpoint=ep, **kw)
    assert agent_name(run(mode="greedy", name="first try")) == "stub (greedy)"
    assert agent_name(run(mode="sampled", temperature=1.0, samples_per_item=10)) == "stub (sampled T=1)"
    assert agent_name(run(mode="sampled", temperature=1.0, samples_per_item=30)) == "stub (sampled T=1)"
    assert agent_name(run(mode="top_logprobs", temperature=0.5)) == "stub (top_logprobs T=0.5)"
    assert agent_name(run(mode="greedy", few_shot=False)) == "stub (greedy, zero-shot)"
    assert agent_name(run(mode="greedy", prompt_version="v2")) == "stub (greedy, prompt v2)"


def test_two_runs_of_one_agent_line_up_with_the_other_set(studies):
    nv, v = studies
    nv_items, v_items = subset(nv), subset(v, 2)
    # two complete greedy runs of "stub" on the non-verifiable set: the older answers 50 everywhere
    older = add_run(nv, "stub", [(item, 50.0) for item in nv_items])
    newer = add_run(nv, "stub", [(item, model_value(item)) for item in nv_items])
    add_run(v, "stub", [(item, model_value(item)) for item in v_items])
    report = build_report(v)
    summary = report.analysis.summary
    stub_rows = [a for a in summary.index if str(a).startswith("stub")]
    assert stub_rows == ["stub (greedy)"]
    row = summary.loc["stub (greedy)"]
    assert not np.isnan(row["pa_nv"]) and not np.isnan(row["pa_v"])
    assert row["delta_pa"] == pytest.approx(row["pa_v"] - row["pa_nv"])
    # the newest complete run is the one scored, not a pool of both (the reference by hand reads the filter's
    # decisions, which the report does not store: the explicit action does)
    apply_attention_filter(nv)
    ref = by_hand_reference(nv)
    assert row["pa_nv"] == pytest.approx(greedy_pa(nv, newer, ref))
    assert row["pa_nv"] != pytest.approx(greedy_pa(nv, older, ref))
    # ... and the model has its non-verifiable point next to true and false in the figures' numbers
    kinds = set(report.truth_means.xs(("stub (greedy)", "overall"), level=("agent", "label")).index)
    assert kinds == {"non-verifiable", "true", "false"}
    runs = report.tables()["runs"].set_index("run_id")
    assert runs.loc[newer.pk, "used"] and not runs.loc[older.pk, "used"]
    assert f"run {newer.pk}" in runs.loc[older.pk, "note"]
    assert set(runs["agent"]) == {"stub (greedy)", "modelx (greedy)", "logprobs (top_logprobs)"}
    # the admin page and the JSON show one row per agent
    assert not [r for r in report.to_json()["tables"]["summary"] if "#" in r["agent"]]


def test_latest_complete_run_beats_a_newer_partial_and_a_newer_failed_one(studies):
    nv, _ = studies
    items = subset(nv)
    complete = add_run(nv, "stub", [(item, model_value(item)) for item in items])
    failing = add_run(nv, "stub", [(item, model_value(item)) for item in items])
    failing.status = ElicitationRun.Status.FAILED
    failing.save()
    add_run(nv, "stub", [(item, 50.0) for item in items if item.expression in ("likely", "doubtful")])
    uses = {u.run_id: u for u in choose_runs(nv, "nv") if u.agent == "stub (greedy)"}
    assert [r for r, u in uses.items() if u.used] == [complete.pk]
    assert uses[failing.pk].covers_all and not uses[failing.pk].used


def test_of_partial_runs_the_one_covering_most_is_used_not_a_newer_cancelled_one(studies):
    nv, _ = studies
    items = subset(nv)
    five = ("likely", "doubtful", "uncertain", "possible", "unlikely")
    wider = add_run(nv, "stub", [(item, model_value(item)) for item in items if item.expression in five])
    cancelled = add_run(nv, "stub", [(item, 50.0) for item in items if item.expression in five[:2]])
    cancelled.status = ElicitationRun.Status.CANCELLED
    cancelled.save()
    uses = {u.run_id: u for u in choose_runs(nv, "nv") if u.agent == "stub (greedy)"}
    assert [r for r, u in uses.items() if u.used] == [wider.pk]
    assert uses[wider.pk].note.startswith("partial: answers cover 5 of 14")
    # the same coverage: the completed run before the newer cancelled one
    same = add_run(nv, "stub", [(item, 50.0) for item in items if item.expression in five])
    same.status = ElicitationRun.Status.CANCELLED
    same.save()
    uses = {u.run_id: u for u in choose_runs(nv, "nv") if u.agent == "stub (greedy)"}
    assert [r for r, u in uses.items() if u.used] == [wider.pk]


def test_a_partial_run_is_flagged_not_comparable(studies, admin_client):
    nv, v = studies
    three = ("likely", "doubtful", "uncertain")
    add_run(nv, "stub", [(item, model_value(item)) for item in subset(nv) if item.expression in three])
    add_run(v, "stub", [(item, model_value(item)) for item in subset(v, 2)])
    report = build_report(v)
    cov = report.analysis.coverage
    assert cov.loc["stub (greedy)", "expressions_nv"] == 3 and cov.loc["stub (greedy)", "expressions_v"] == 14
    assert cov.loc["stub (greedy)", "expressions_total"] == 14 and not cov.loc["stub (greedy)", "comparable"]
    assert cov.loc["modelx (greedy)", "comparable"] and cov.loc["Human Mode", "comparable"]
    # the partial run's Avg PA is still over its 3 expressions, but labelled as such everywhere
    data = json.loads(json.dumps(report.to_json()))
    rows = {r["agent"]: r for r in data["tables"]["summary"]}
    assert rows["stub (greedy)"]["comparable"] is False and rows["stub (greedy)"]["expressions_nv"] == 3
    assert rows["modelx (greedy)"]["comparable"] is True
    assert data["meta"]["not_comparable"] == {
        "stub (greedy)": "covers 3/14 expressions (non-verifiable statements)"}
    per_u = report.tables()["pa_per_expression_nv"].set_index("expression")
    assert per_u.loc["Expressions covered", "stub (greedy)"] == 3
    assert per_u.loc["Expressions covered", "modelx (greedy)"] == 14
    runs = report.tables()["runs"]
    partial = runs[(runs["agent"] == "stub (greedy)") & (runs["set"] == "nv")].iloc[0]
    assert partial["used"] and partial["note"].startswith("partial: answers cover 3 of 14")
    page = admin_client.get(reverse("admin:analysis_studyanalysis_report", args=[v.pk])).content.decode()
    assert 'id="not-comparable"' in page and "covers 3/14 expressions" in page
    assert "<td>3/14</td>" in page and "no: fewer expressions" in page
    covered_row = page.split('id="table-pa_per_expression_nv"', 1)[1].split("<td>Expressions covered</td>", 1)[1]
    cells = [c.split("</td>")[0] for c in covered_row.split("</tr>", 1)[0].split("<td>")[1:]]
    assert "3" in cells and "14" in cells and all(c.isdigit() for c in cells)
    notes = {name: fig for name, fig in report_figures(report)}
    try:
        assert "not comparable" in notes["histograms-nv-stub-greedy"].axes[0].get_title(loc="left")
        assert "not comparable" not in notes["histograms-nv-modelx-greedy"].axes[0].get_title(loc="left")
    finally:
        for fig in notes.values():
            plt.close(fig)


def test_complete_report_has_no_not_comparable_note(studies, admin_client):
    _, v = studies
    assert build_report(v).to_json()["meta"]["not_comparable"] == {}
    page = admin_client.get(reverse("admin:analysis_studyanalysis_report", args=[v.pk])).content.decode()
    assert 'id="not-comparable"' not in page


def test_wep_report_names_its_questions_not_statements(db, admin_client):
    from test_analysis_importers import FAGEN, SILEO_MEDIANS
    from surveys.answer_import import import_wide

    study = Study.objects.create(slug="fagen", title="Fagen", instrument="wep_probability")
    import_wide(study, FAGEN)
    add_run(study, "wepmodel", [(item, float(SILEO_MEDIANS[item.expression])) for item in study.main_items()])
    report = build_report(study)
    figures = dict(report_figures(report))
    try:
        titles = [fig.axes[0].get_title(loc="left") for fig in figures.values()]
        assert titles and all("WEP probability questions" in t and "statements" not in t for t in titles)
    finally:
        for fig in figures.values():
            plt.close(fig)
    page = admin_client.get(reverse("admin:analysis_studyanalysis_report", args=[study.pk])).content.decode()
    assert "PA per expression, WEP probability questions" in page
    assert "non-verifiable statements" not in page
