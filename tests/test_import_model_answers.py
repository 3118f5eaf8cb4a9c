"""Model answers produced elsewhere become an imported run: long CSV, JSON Lines, Tang's wide result files."""
from __future__ import annotations

import csv
import hashlib
import json
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction

from analysis.agents import choose_runs
from analysis.dataset import study_answers
from surveys.answer_import import ResponseColumns, _ensure_items, import_responses
from analysis.model_answer_import import IMPORTED_BASE_URL, IMPORTED_NOTES, ModelAnswerFile, import_model_answers
from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from elicitation.runs import RunStateError, resume_run, start_run
from surveys.importers import ImportFailed, import_items
from families.tang.wep_probability import EXPRESSIONS
from surveys.models import Item, Study

SILEO_MEDIANS = {
    "almost certain": 95, "highly likely": 90, "very good chance": 80, "we believe": 75, "likely": 70,
    "probably": 70, "probable": 70, "better than even": 60, "about even": 50, "probably not": 25,
    "we doubt": 20, "unlikely": 20, "little chance": 10, "chances are slight": 10, "improbable": 10,
    "highly unlikely": 5, "almost no chance": 2,
}


@pytest.fixture
def wep_study(db):
    """The minimal WEP study: one item per WEP (the expression alone)."""
    study = Study.objects.create(slug="wep", title="WEP", instrument="wep_probability", status="live")
    _ensure_items(study)
    return study


@pytest.fixture
def context_study(db, tmp_path):
    """A WEP study with context items: 3 CNC contexts × 2 WEPs, statement ids written out of order."""
    study = Study.objects.create(slug="ctx", title="Contexts", instrument="wep_probability")
    rows = [[wep, "CNC", f"CNC-{n:02d}", f"Sentence {n}: it is {{}} to rain."]
            for n in (3, 1, 2) for wep in ("likely", "we doubt")]
    import_items(study, write_csv(tmp_path / "items.csv", ["expression", "context", "statement_id", "statement"], rows))
    return study


def write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def tang_file(path: Path, columns: int = 15, extra_rows: bool = True) -> Path:
    """A file shaped like Tang et al.'s ``Results - short_context_gpt-4.csv``: a blank header, the WEP in the
    first column, one column per context with the model's probability 0–1, then avg and std; rows for WEPs
    outside the 17 (\"always\")."""
    rows = []
    if extra_rows:
        rows.append(["always"] + ["1"] * columns + ["1", "0"])
    for wep in EXPRESSIONS:
        p = SILEO_MEDIANS[wep] / 100
        rows.append([wep] + [f"{p:g}"] * columns + [f"{p:g}", "0"])
    return write_csv(path, [""] * (columns + 1) + ["avg", "std"], rows)


def model_rows(run: ElicitationRun) -> list[tuple]:
    return list(ModelResponse.objects.filter(run=run).order_by("item__expression", "sample_index")
                .values_list("item__expression", "sample_index", "status", "raw_output", "value", "bin"))


# --- wide files (Tang) ------------------------------------------------------------------------------
def test_tang_wide_file_becomes_an_imported_run(wep_study, tmp_path):
    path = tang_file(tmp_path / "Results - short_context_gpt-4.csv")
    summary = import_model_answers(wep_study, path, ModelAnswerFile(model="gpt-4", shape="wide"))
    run = summary.run
    assert (run.source, run.status, run.mode, run.prompt_style) == ("imported", "completed", "greedy", "standard")
    assert run.source_file == path.name and run.source_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (run.endpoint.name, run.endpoint.base_url, run.endpoint.notes) == ("gpt-4", IMPORTED_BASE_URL, IMPORTED_NOTES)
    assert run.samples_per_item == 15 and run.items.count() == 17
    assert (summary.answers, summary.unparseable, summary.items) == (17 * 15, 0, 17)
    assert summary.ignored_rows == ["always"] and summary.ignored_columns == ["avg", "std"]
    assert "read as probabilities" in summary.scale_note
    rows = ModelResponse.objects.filter(run=run)
    assert rows.count() == 17 * 15
    likely = rows.filter(item__expression="likely").order_by("sample_index")
    assert list(likely.values_list("sample_index", flat=True)) == list(range(15))
    first = likely.first()
    assert (first.raw_output, first.value, first.bin, first.status) == ("0.7", 70.0, 70.0, "ok")
    assert first.detail["imported"] == {"file": path.name, "line": 7, "column": "column 2"}
    assert rows.get(item__expression="almost no chance", sample_index=0).value == 2.0  # 0.02 × 100, no float noise
    assert rows.get(item__expression="almost no chance", sample_index=0).bin == 0.0


def test_wide_missing_and_unparseable_cells_are_counted(wep_study, tmp_path):
    path = write_csv(tmp_path / "r.csv", ["", "", "", "avg"], [
        ["likely", "0.8", "NA", "0.8"],
        ["We Doubt", "0.3", "I would not say", "0.3"],
        ["about even", "", "0.5", "0.5"],
    ])
    with pytest.raises(ImportFailed, match="no answer for 14 WEP.*almost certain.*give --allow-missing"):
        import_model_answers(wep_study, path, ModelAnswerFile(model="m", shape="wide"))
    assert not ElicitationRun.objects.exists()
    summary = import_model_answers(wep_study, path, ModelAnswerFile(model="m", shape="wide", allow_missing=True))
    assert (summary.answers, summary.unparseable, summary.missing) == (4, 1, 2)
    bad = ModelResponse.objects.get(run=summary.run, status="unparseable")
    assert (bad.item.expression, bad.sample_index, bad.raw_output, bad.value) == ("we doubt", 1, "I would not say", None)
    assert bad.parse_error == "no number in the answer"
    # about even's answer stays in its column's sample index
    assert ModelResponse.objects.get(run=summary.run, item__expression="about even").sample_index == 1
    assert "no answer for:" in str(summary) and "likely" not in summary.unanswered_expressions
    # the same file again with the missing cells kept: refused (same bytes), so change a byte
    path.write_text(path.read_text() + "\n")
    kept = import_model_answers(wep_study, path, ModelAnswerFile(model="m2", shape="wide", keep_missing=True,
                                                                     allow_missing=True))
    assert (kept.answers, kept.unparseable, kept.missing) == (6, 3, 0)


def test_wide_columns_stand_for_context_items_by_statement_id_order(context_study, tmp_path):
    path = write_csv(tmp_path / "cnc.csv", ["wep", "a", "b", "c", "Avg", "Std"], [
        ["likely", "0.61", "0.62", "0.63", "0.62", "0"],
        ["we doubt", "0.21", "0.22", "0.23", "0.22", "0"],
    ])
    summary = import_model_answers(context_study, path, ModelAnswerFile(model="m", shape="wide",
                                                                         fixed={"context": "cnc"}))
    assert "position" in summary.mapping_note
    got = dict(ModelResponse.objects.filter(run=summary.run).values_list("item__key", "value"))
    assert got["CNC|en|CNC-01|likely"] == 61 and got["CNC|en|CNC-02|likely"] == 62 and got["CNC|en|CNC-03|we doubt"] == 23
    assert set(ModelResponse.objects.filter(run=summary.run).values_list("sample_index", flat=True)) == {0}
    # by header instead: the columns name the statement ids
    named = write_csv(tmp_path / "named.csv", ["wep", "CNC-02", "CNC-01"], [["likely", "0.5", "0.4"]])
    summary = import_model_answers(context_study, named, ModelAnswerFile(model="m3", shape="wide",
                                                                          columns="statement_id", allow_missing=True))
    got = dict(ModelResponse.objects.filter(run=summary.run).values_list("item__statement_id", "value"))
    assert got == {"CNC-02": 50, "CNC-01": 40}


def test_wide_errors_name_line_and_column_and_import_nothing(context_study, tmp_path):
    path = write_csv(tmp_path / "bad.csv", ["wep", "a", "b"], [
        ["likely", "0.6", "0.6"],     # line 2: 3 contexts in the study, 2 columns in the file
        ["", "0.2", "0.2"],           # line 3: no WEP
    ])
    with pytest.raises(ImportFailed) as info:
        import_model_answers(context_study, path, ModelAnswerFile(model="m", shape="wide"))
    errors = [(e.line, e.column) for e in info.value.errors]
    assert errors == [(2, "wep"), (3, "wep")]
    assert "has 3 items in the study" in info.value.errors[0].message
    assert "2 answer columns" in info.value.errors[0].message
    with pytest.raises(ImportFailed) as info:
        import_model_answers(context_study, path, ModelAnswerFile(model="m", shape="wide", columns="samples"))
    assert "differ in statement_id, text" in info.value.errors[0].message
    assert not ElicitationRun.objects.exists() and not ModelEndpoint.objects.exists()


# --- long files -------------------------------------------------------------------------------------
def test_long_csv_by_key_numbers_repeated_answers(context_study, tmp_path):
    path = write_csv(tmp_path / "long.csv", ["key", "answer"], [
        ["CNC|en|CNC-01|likely", "I'd say 70%."],
        ["CNC|en|CNC-01|likely", "75"],
        ["CNC|en|CNC-02|we doubt", "maybe twenty"],
    ])
    summary = import_model_answers(context_study, path, ModelAnswerFile(model="llama", mode="sampled",
                                                                        temperature=0.7, fields={"key": "key"}))
    assert (summary.answers, summary.unparseable) == (3, 1)
    assert model_rows(summary.run) == [
        ("likely", 0, "ok", "I'd say 70%.", 70.0, 70.0),
        ("likely", 1, "ok", "75", 75.0, 75.0),
        ("we doubt", 0, "unparseable", "maybe twenty", None, None),
    ]
    assert summary.run.samples_per_item == 2
    assert summary.scale_note == ""  # 70 and 75 are not probabilities


def test_long_csv_by_the_items_own_fields(context_study, tmp_path):
    """Columns named like the item's fields identify it; a fixed value stands for a missing column."""
    path = write_csv(tmp_path / "f.csv", ["statement_id", "expression", "answer"], [
        ["CNC-03", "Likely", "0.9"], ["CNC-03", "we doubt", "0.1"]])
    summary = import_model_answers(context_study, path, ModelAnswerFile(model="m", fixed={"language": "en"}))
    got = dict(ModelResponse.objects.filter(run=summary.run).values_list("item__key", "value"))
    assert got == {"CNC|en|CNC-03|likely": 90.0, "CNC|en|CNC-03|we doubt": 10.0}
    # the expression alone names 3 items: the error says what tells them apart
    path = write_csv(tmp_path / "g.csv", ["wep", "answer"], [["likely", "50"]])
    with pytest.raises(ImportFailed) as info:
        import_model_answers(context_study, path, ModelAnswerFile(model="m", fields={"expression": "wep"}))
    error = info.value.errors[0]
    assert (error.line, error.column) == (2, "wep")
    assert error.message.startswith("expression 'likely' matches 3 items of the study, which differ in statement_id, text")


def test_json_lines(wep_study, tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"expression": "likely", "answer": 0.7},
        {"expression": "likely", "answer": "0.75"},
        {"expression": "we doubt", "answer": "Answer: 0.2", "model": "ignored"},
    ]) + "\n\n")
    summary = import_model_answers(wep_study, path, ModelAnswerFile(model="gpt-3.5", scale="1"))
    assert model_rows(summary.run) == [
        ("likely", 0, "ok", "0.7", 70.0, 70.0),
        ("likely", 1, "ok", "0.75", 75.0, 75.0),
        ("we doubt", 0, "ok", "Answer: 0.2", 20.0, 20.0),
    ]
    # read on 0–100 as they are (after deleting the run: the same file is imported once)
    summary.run.delete()
    summary = import_model_answers(wep_study, path, ModelAnswerFile(model="gpt-3.5", scale="100"))
    assert ModelResponse.objects.get(run=summary.run, item__expression="we doubt").value == 0.2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"expression": "likely", "answer": "50"}\n{"expression": "likely" "answer": 1}\n[1]\n'
                   '{"answer": "3"}\n')
    with pytest.raises(ImportFailed) as info:
        import_model_answers(wep_study, bad, ModelAnswerFile(model="x"))
    assert [(e.line, e.column) for e in info.value.errors] == [(2, "-"), (3, "-"), (4, "expression")]


def test_a_bad_row_imports_nothing_and_names_line_and_column(wep_study, tmp_path):
    path = write_csv(tmp_path / "bad.csv", ["expression", "answer", "n"], [
        ["likely", "70", "0"],
        ["fairly probable", "60", "0"],   # line 3: not an expression of the study
        ["likely", "71", "0"],            # line 4: sample 0 of likely again
        ["unlikely", "20", "first"],      # line 5: not a sample index
    ])
    with pytest.raises(ImportFailed) as info:
        import_model_answers(wep_study, path, ModelAnswerFile(model="m", sample="n"))
    assert [(e.line, e.column) for e in info.value.errors] == [(3, "expression"), (4, "answer"), (5, "n")]
    assert "first on line 2" in info.value.errors[1].message
    assert not ElicitationRun.objects.exists() and not ModelResponse.objects.exists()


def test_reimport_is_refused_and_the_database_backs_it(wep_study, tmp_path):
    path = write_csv(tmp_path / "a.csv", ["expression", "answer"], [["likely", "70"]])
    run = import_model_answers(wep_study, path, ModelAnswerFile(model="m")).run
    with pytest.raises(ImportFailed, match=f"already imported into wep as run {run.pk}"):
        import_model_answers(wep_study, path, ModelAnswerFile(model="other-name"))
    assert ElicitationRun.objects.count() == 1 and ModelResponse.objects.count() == 1
    with pytest.raises(IntegrityError), transaction.atomic():
        ElicitationRun.objects.create(study=wep_study, endpoint=run.endpoint, source="imported",
                                      source_sha256=run.source_sha256)
    # live runs have no file: any number of them
    ElicitationRun.objects.create(study=wep_study, endpoint=run.endpoint)
    ElicitationRun.objects.create(study=wep_study, endpoint=run.endpoint)


def test_an_imported_run_is_never_started_or_resumed(wep_study, tmp_path):
    path = write_csv(tmp_path / "a.csv", ["expression", "answer"], [["likely", "70"]])
    run = import_model_answers(wep_study, path, ModelAnswerFile(model="m")).run
    for action in (start_run, resume_run):
        with pytest.raises(RunStateError, match="imported answers"):
            action(run, queue=False)
    assert ModelResponse.objects.filter(run=run).count() == 1  # no pending rows for the other 16 WEPs


def test_settings_that_cannot_be_imported(wep_study, tmp_path):
    path = write_csv(tmp_path / "a.csv", ["expression", "answer"], [["likely", "70"]])
    ModelEndpoint.objects.create(name="gpt4o", base_url="https://api.openai.com/v1", model="gpt-4o")
    with pytest.raises(ImportFailed, match="'gpt4o' is a live endpoint"):
        import_model_answers(wep_study, path, ModelAnswerFile(model="gpt4o"))
    cases = [
        (dict(mode="top_logprobs"), "distributions cannot be imported"),
        (dict(mode="sampled"), "need the temperature"),
        (dict(prompt_style="cot"), "prompt style 'cot' is not one of wep_probability's (standard)"),
        (dict(fields={"colour": "c"}), "unknown item field 'colour'"),
        (dict(fixed={"context": "ENC"}), "no item of the study has context 'ENC'"),
    ]
    for options, message in cases:
        with pytest.raises(ImportFailed, match=re.escape(message)):
            import_model_answers(wep_study, path, ModelAnswerFile(model="m", **options))
    assert not ElicitationRun.objects.exists()


# --- the report ---------------------------------------------------------------------------------------
def test_the_imported_run_is_an_agent_of_the_study(wep_study, tmp_path):
    import_model_answers(wep_study, tang_file(tmp_path / "gpt4.csv"), ModelAnswerFile(model="gpt-4", shape="wide"))
    import_model_answers(wep_study, tang_file(tmp_path / "gpt35.csv", columns=3),
                         ModelAnswerFile(model="gpt-3.5-turbo", shape="wide", mode="sampled", temperature=1))
    answers = study_answers(wep_study)
    assert answers.groupby("agent").size().to_dict() == {"gpt-4 (greedy)": 255, "gpt-3.5-turbo (sampled T=1)": 51}
    medians = answers[answers["agent"] == "gpt-4 (greedy)"].groupby("label")["value"].median()
    assert medians.to_dict() == {k: float(v) for k, v in SILEO_MEDIANS.items()}
    uses = choose_runs(wep_study, "nv")
    assert all(u.used and u.covers_all for u in uses)


def test_report_compares_imported_answers_with_humans(db, tmp_path):
    from surveys.answer_import import import_wide
    from analysis.reports import build_report
    from test_analysis_importers import FAGEN

    study = Study.objects.create(slug="fagen", title="Fagen", instrument="wep_probability")
    import_wide(study, FAGEN)
    import_model_answers(study, tang_file(tmp_path / "Results - short_context_gpt-4.csv"),
                         ModelAnswerFile(model="gpt-4", shape="wide"))
    tang = build_report(study).tables()["tang"]
    assert set(tang["agent"]) == {"gpt-4 (greedy)"} and len(tang) == 17
    assert (tang["n_model"] == 15).all()
    assert tang["amd"].max() <= 5  # the model answers the published medians


# --- the command and the admin --------------------------------------------------------------------------
def test_command(wep_study, tmp_path, capsys):
    path = tang_file(tmp_path / "t.csv", columns=2)
    call_command("import_model_answers", "wep", str(path), "--model", "gpt-4", "--shape", "wide")
    out = capsys.readouterr().out
    assert "34 answers to 17 items, 0 unparseable" in out and "ignored rows (not an expression of the study): always" in out
    with pytest.raises(CommandError, match="already imported"):
        call_command("import_model_answers", "wep", str(path), "--model", "gpt-4", "--shape", "wide")
    long = write_csv(tmp_path / "l.csv", ["k", "text"], [["likely", "sixty"], ["nope", "1"]])
    with pytest.raises(CommandError) as info:
        call_command("import_model_answers", "wep", str(long), "--model", "m", "--key-column", "k",
                     "--answer-column", "text")
    assert "line 3, column 'k': no item of the study has key 'nope'" in str(info.value)
    with pytest.raises(CommandError, match="FIELD=VALUE"):
        call_command("import_model_answers", "wep", str(long), "--model", "m", "--set", "CNC")


def test_admin_upload(admin_client, wep_study, tmp_path):
    from analysis.models import StudyAnalysis

    url = f"/admin/analysis/studyanalysis/{wep_study.pk}/import-model-answers/"
    page = admin_client.get(url)
    assert page.status_code == 200 and "Model name" in page.content.decode()
    listing = admin_client.get("/admin/analysis/studyanalysis/").content.decode()
    assert url in listing and StudyAnalysis.objects.filter(pk=wep_study.pk).exists()
    data = tang_file(tmp_path / "t.csv", columns=2).read_bytes()
    from django.core.files.uploadedfile import SimpleUploadedFile

    form = {"model": "gpt-4", "shape": "wide", "mode": "greedy", "prompt_style": "standard", "scale": "auto",
            "answer_column": "answer", "columns": "auto"}
    response = admin_client.post(url, form | {"file": SimpleUploadedFile("t.csv", data)})
    assert response.status_code == 302
    run = ElicitationRun.objects.get(source="imported")
    assert run.source_file == "t.csv" and ModelResponse.objects.filter(run=run).count() == 34
    run_page = admin_client.get(f"/admin/elicitation/elicitationrun/{run.pk}/change/").content.decode()
    assert run.source_sha256 in run_page and "imported answers (produced elsewhere)" in run_page
    resumed = admin_client.post("/admin/elicitation/elicitationrun/", {"action": "resume_runs",
                                                                        "_selected_action": [run.pk]}, follow=True)
    assert "holds imported answers" in resumed.content.decode()
    assert ModelResponse.objects.filter(run=run).count() == 34
    bad = write_csv(tmp_path / "b.csv", ["expression", "answer"], [["likely", "1"], ["nope", "2"]]).read_bytes()
    response = admin_client.post(url, form | {"shape": "long", "model": "m2", "file": SimpleUploadedFile("b.csv", bad)})
    assert response.status_code == 400
    assert "line 3, column “expression”: no item of the study has expression" in response.content.decode()
    assert ElicitationRun.objects.count() == 1


# --- import_responses: the message when a statement id is shared ------------------------------------------
def test_import_responses_says_what_is_shared_and_what_tells_rows_apart(nv_study, tmp_path):
    common = dict(study=nv_study, expression="likely", statement="It will rain.", statement_id="s1")
    Item.objects.create(key="s1-true", truth="true", **common)
    Item.objects.create(key="s1-false", truth="false", **common)
    path = write_csv(tmp_path / "a.csv", ["pid", "sid", "e", "v"], [["P1", "s1", "likely", "40"]])
    with pytest.raises(ImportFailed) as info:
        import_responses(nv_study, path, ResponseColumns(participant="pid", statement="sid", expression="e", value="v"))
    message = info.value.errors[0].message
    assert message == ("2 items share statement id 's1' and expression 'likely'; they differ in truth: "
                       "add a truth column (--truth, true/false)")
    help_text = _help("import_responses")
    assert "--text COL" in help_text and "shared by different" in " ".join(help_text.split())


def _help(command: str) -> str:
    from django.core.management import load_command_class

    parser = load_command_class("analysis", command).create_parser("manage.py", command)
    return parser.format_help()


# --- a choice instrument (WEP choice, Tang RQ2) ------------------------------------------------------------
def test_choice_answers_standard_and_cot(db, tmp_path):
    study = Study.objects.create(slug="rq2", title="RQ2", instrument="wep_choice")
    options = "A.is almost certainly|B.is likely to be|C.is maybe|D.is unlikely to be|E.is almost certainly not"
    items = write_csv(tmp_path / "items.csv", ["key", "statement", "options"], [
        ["h1", "A height picked at random _ below 99.", options],
        ["h2", "A height picked at random _ above 99.", options],
    ])
    import_items(study, items)
    standard = write_csv(tmp_path / "standard.csv", ["key", "answer"], [["h1", "B"], ["h2", "B.is likely to be"]])
    summary = import_model_answers(study, standard, ModelAnswerFile(model="gpt-4-0613", fields={"key": "key"}))
    assert dict(ModelResponse.objects.filter(run=summary.run).values_list("item__key", "choice")) == {"h1": "B", "h2": "B"}
    cot = tmp_path / "cot.jsonl"
    cot.write_text("\n".join(json.dumps(r) for r in [
        {"key": "h1", "answer": "About 70% of the heights are below 99, so B or C... I choose: C"},
        {"key": "h2", "answer": "I cannot tell from these numbers."},  # no option: unreadable, kept
    ]))
    summary = import_model_answers(study, cot, ModelAnswerFile(model="gpt-4-0613", prompt_style="cot"))
    rows = {r.item.key: r for r in ModelResponse.objects.filter(run=summary.run)}
    assert (rows["h1"].status, rows["h1"].choice, rows["h1"].value, rows["h1"].bin) == ("ok", "C", None, None)
    assert rows["h2"].status == "unparseable" and rows["h2"].choice == "" and summary.unparseable == 1
    assert summary.run.prompt_style == "cot"
    # the two prompt styles are two agents of the report
    agents = study_answers(study).groupby("agent").size().to_dict()
    assert agents == {"gpt-4-0613 (greedy)": 2, "gpt-4-0613 (greedy, cot)": 2}
    with pytest.raises(ImportFailed, match=re.escape("a 0–1 scale applies to number answers; wep_choice answers with a choice")):
        import_model_answers(study, write_csv(tmp_path / "s.csv", ["key", "answer"], [["h1", "A"]]),
                             ModelAnswerFile(model="m", scale="1"))


def test_aliases_name_the_studys_expressions(wep_study, tmp_path):
    """Tang's ENC files write "almost certainly" and "chances about even" for the survey's WEPs."""
    path = write_csv(tmp_path / "Results - long_context_gpt-4.csv", ["", "", "", "avg", "std"], [
        ["almost certainly", "0.9", "0.95", "92.5%", "2.5%"],
        ["chances about even", "0.5", "0.5", "50.00%", "0.00%"],
        ["likely", "0.8", "0.8", "80%", "0%"],
    ])
    summary = import_model_answers(wep_study, path, ModelAnswerFile(model="m", shape="wide", allow_missing=True))
    assert summary.ignored_rows == ["almost certainly", "chances about even"] and summary.answers == 2
    summary.run.delete()
    aliases = {"Almost Certainly": "almost certain", "chances about even": "about even"}
    summary = import_model_answers(wep_study, path, ModelAnswerFile(model="m", shape="wide", aliases=aliases,
                                                                     allow_missing=True))
    assert summary.ignored_rows == [] and summary.answers == 6
    got = dict(ModelResponse.objects.filter(run=summary.run, sample_index=1).values_list("item__expression", "value"))
    assert got == {"almost certain": 95.0, "about even": 50.0, "likely": 80.0}
    long = write_csv(tmp_path / "l.csv", ["expression", "answer"], [["Almost certainly", "93"]])
    summary = import_model_answers(wep_study, long, ModelAnswerFile(model="m-long", aliases=aliases))
    assert ModelResponse.objects.get(run=summary.run).item.expression == "almost certain"
    with pytest.raises(CommandError, match="WRITTEN=MEANT"):
        call_command("import_model_answers", "wep", str(long), "--model", "m", "--alias", "almost certainly")
