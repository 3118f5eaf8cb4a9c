"""The study report: Belem-shaped tables from the database, files, figures, admin page and API."""
from __future__ import annotations

import io
import json
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from analysis.reports import ReportError, build_report
from analysis.exports import hashed_id
from families.belem.attention import apply_attention_filter
from elicitation.models import ElicitationRun
from surveys.importers import import_items
from surveys.models import Participant, Response, Study
from test_analysis_factories import SHIFT, TYPICAL, nv_and_v, snap


@pytest.fixture
def studies(imported_nv, belem_dir):
    return nv_and_v(imported_nv, belem_dir)


def by_hand_reference(study: Study) -> dict[str, np.ndarray]:
    """P(k|u) from scratch: included participants' answers to expressions, 21 bins."""
    counts: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(21))
    rows = Response.objects.filter(item__study=study, participant__attention_included=True, item__is_control=False)
    for expression, value in rows.values_list("item__expression", "value"):
        counts[expression][int(min(100, np.floor((value + 2.5) / 5) * 5) // 5)] += 1
    return {u: c / c.sum() for u, c in counts.items()}


def test_report_of_a_verifiable_study(studies):
    nv, v = studies
    report = build_report(v)
    summary = report.analysis.summary
    assert list(summary.index[:3]) == ["Human Mode", "Human Individual", "Random"]
    assert {"modelx (greedy)", "logprobs (top_logprobs)"} <= set(summary.index)

    # the report computed the attention filter on both studies without storing it (a read never writes) ...
    excluded = {e.prolific_pid for r in report.attention for e in r.excluded}
    assert {"nv-spam", "v-spam"} <= excluded
    assert not Participant.objects.filter(attention_included__isnull=False).exists()
    # ... storing its decisions is the explicit action (the spammers are kept in the database)
    apply_attention_filter(nv), apply_attention_filter(v)
    assert not Participant.objects.get(prolific_pid="nv-spam").attention_included
    assert not Participant.objects.get(prolific_pid="v-spam").attention_included
    assert Participant.objects.filter(study__in=[nv, v]).count() == 14 + 11

    # PA of the greedy model, by hand against the filtered non-verifiable reference
    ref = by_hand_reference(nv)
    for set_name, study in (("nv", nv), ("v", v)):
        run = ElicitationRun.objects.get(study=study, endpoint__name="modelx")
        per_u: dict[str, list[float]] = defaultdict(list)
        for r in run.responses.select_related("item").filter(item__is_control=False, value__isnull=False):
            per_u[r.item.expression].append(ref[r.item.expression][int(r.value // 5)])
        expected = np.mean([np.mean(v_) for v_ in per_u.values()]) * 100
        assert summary.loc["modelx (greedy)", f"pa_{set_name}"] == pytest.approx(expected)
    assert summary.loc["modelx (greedy)", "delta_pa"] == pytest.approx(
        summary.loc["modelx (greedy)", "pa_v"] - summary.loc["modelx (greedy)", "pa_nv"])
    assert summary.loc["Human Mode", "pa_nv"] == pytest.approx(np.mean([p.max() for p in ref.values()]) * 100)
    assert summary.loc["Random", "pa_nv"] == pytest.approx(100 / 21)

    # knowledge bias: the model answers TYPICAL ± 10 on true/false statements
    kb = report.analysis.knowledge_bias
    for u in ("likely", "doubtful", "uncertain"):
        row = kb.loc[("modelx (greedy)", u)]
        assert row["gap"] == pytest.approx(2 * SHIFT)
        assert row["ci_low"] == pytest.approx(2 * SHIFT) and row["ci_high"] == pytest.approx(2 * SHIFT)
    humans = kb.loc[("human", "overall")]
    assert humans["method"] == "paired" and humans["ci_low"] < humans["gap"] < humans["ci_high"]
    assert 10 < humans["gap"] < 30

    tables = report.tables()
    assert {"summary", "pa_per_expression_nv", "pa_per_expression_v", "knowledge_bias", "truth_means",
            "descriptives", "reference", "ranking", "attention"} <= set(tables)
    per_u = tables["pa_per_expression_nv"]
    assert list(per_u["expression"].iloc[:5]) == ["Avg PA", "Expressions covered", "almost certain",
                                                  "highly likely", "very likely"]
    assert (per_u.set_index("expression").loc["Expressions covered"] == 14).all()
    desc = tables["descriptives"].set_index(["set", "agent", "label"])
    assert desc.loc[("non-verifiable", "modelx (greedy)", nv.main_items().order_by("id").first().label), "unparsed"] == 1
    assert "prolific_pid" not in tables["attention"]  # salted ids unless the viewer may see participants
    assert set(tables["attention"]["respondent_id"]) == {hashed_id(p) for p in ("nv-spam", "nv-flat", "v-spam")}
    raw = report.seen_by(raw_ids=True).tables()["attention"]
    assert set(raw["prolific_pid"]) == {"nv-spam", "nv-flat", "v-spam"}
    truth = report.truth_means.sort_index().loc[("modelx (greedy)", "likely")]
    assert truth.loc["true", "mean"] == snap(TYPICAL["likely"] + SHIFT)
    assert truth.loc["false", "mean"] == snap(TYPICAL["likely"] - SHIFT)


def test_report_json_and_files(studies, tmp_path):
    nv, v = studies
    out = io.StringIO()
    call_command("report", "v", "--out", str(tmp_path / "rep"), stdout=out)
    files = {p.name for p in (tmp_path / "rep").iterdir()}
    assert {"report.json", "summary.csv", "knowledge_bias.csv", "pa_per_expression_v.csv"} <= files
    for stem in ("histograms-nv-human", "histograms-v-human", "histograms-nv-modelx-greedy",
                 "histograms-nv-logprobs-top_logprobs", "truth-overall", "truth-by-expression"):
        assert {f"{stem}.png", f"{stem}.svg"} <= files, stem
        assert (tmp_path / "rep" / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert data["meta"]["study"] == "v" and data["meta"]["non_verifiable_study"] == "nv"
    assert data["meta"]["attention_filter"]["nv"]["excluded"] == 2
    rows = {r["agent"]: r for r in data["tables"]["summary"]}
    assert rows["Human Mode"]["mae_nv"] is None  # NaN → null
    csv_summary = pd.read_csv(tmp_path / "rep" / "summary.csv").set_index("agent")
    assert csv_summary.loc["modelx (greedy)", "pa_v"] == pytest.approx(rows["modelx (greedy)"]["pa_v"])
    assert "written" in out.getvalue()


def test_report_of_a_non_verifiable_study_has_no_v_columns(studies):
    nv, _ = studies
    report = build_report(nv)
    assert report.v_study is None and "pa_v" not in report.analysis.summary.columns
    assert "knowledge_bias" not in report.tables()
    names = [name for name, _ in report.section("belem").figures()]
    assert names == ["histograms-nv-human", "histograms-nv-logprobs-top_logprobs", "histograms-nv-modelx-greedy"]
    assert [name for name, _ in report.figures()] == names + ["generic-all-items"]  # the generic section's after


def test_report_errors_are_clear(imported_nv, belem_dir, tmp_path):
    assert "no completed human participants" in build_report(imported_nv).skipped["belem"]
    v = Study.objects.create(slug="v2", title="V2")
    import_items(v, belem_dir / "verifiable.csv")
    assert "no reference_study" in build_report(v).skipped["belem"]
    out = io.StringIO()
    call_command("report", "v2", "--no-figures", "--out", str(tmp_path), stdout=out)
    assert "Not built yet:\n- belem: study 'v2' has verifiable items but no reference_study" in out.getvalue()


def test_wep_study_report_medians(db):
    from test_analysis_importers import FAGEN, SILEO_MEDIANS
    from surveys.answer_import import import_wide

    study = Study.objects.create(slug="fagen", title="Fagen", instrument="wep_probability")
    import_wide(study, FAGEN)
    study.attention_threshold = -1.0  # keep everyone: the published medians are over all 123 respondents
    study.save()
    report = build_report(study)
    desc = report.tables()["descriptives"].set_index("label")
    assert desc["median"].to_dict() == {k: float(v) for k, v in SILEO_MEDIANS.items()}
    assert (desc["answers"] == 123).all()
    assert len(report.analysis.reference) == 17


def test_wep_study_with_a_model_run_gets_the_tang_table(db, tmp_path):
    from test_analysis_factories import add_run
    from test_analysis_importers import FAGEN, SILEO_MEDIANS
    from surveys.answer_import import import_wide

    study = Study.objects.create(slug="fagen", title="Fagen", instrument="wep_probability")
    import_wide(study, FAGEN)
    items = list(study.main_items())
    # a model answering each WEP's published median, three samples each
    add_run(study, "wepmodel", [(item, float(SILEO_MEDIANS[item.expression]), k) for item in items for k in range(3)],
            mode=ElicitationRun.Mode.SAMPLED, temperature=0.7)
    report = build_report(study)
    tang = report.tables()["tang"]
    assert set(tang["agent"]) == {"wepmodel (sampled T=0.7)"} and len(tang) == 17
    assert (tang["n_model"] == 3).all() and (tang["n_human"] == report.analysis.nv.filter["included"].sum()).all()
    assert tang["amd"].max() <= 5  # the model sits on the human medians (the filter moves a median by at most a step)
    assert ((tang["theta"] >= 0) & (tang["theta"] <= 1)).all()
    written = {p.name for p in report.write(tmp_path)}
    assert {"tang.csv", "histograms-nv-wepmodel-sampled-t07.png"} <= written
