"""Importers of earlier data: long files of answers and wide survey files (all or nothing)."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from analysis.dataset import human_answers
from surveys.answer_import import ResponseColumns, import_responses, import_wide
from surveys.importers import ImportFailed, import_items
from surveys.models import Assignment, Item, Participant, Response, Study

SHARED_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"

FAGEN = SHARED_DATA / "fagen-ulmschneider-2015" / "survey-results.csv"

# Sileo & Moens, App. A, Table 2: median of the Fagen-Ulmschneider answers per WEP.
SILEO_MEDIANS = {
    "almost certain": 95, "highly likely": 90, "very good chance": 80, "we believe": 75, "likely": 70,
    "probably": 70, "probable": 70, "better than even": 60, "about even": 50, "probably not": 25,
    "we doubt": 20, "unlikely": 20, "little chance": 10, "chances are slight": 10, "improbable": 10,
    "highly unlikely": 5, "almost no chance": 2,
}


def counts(study: Study) -> tuple[int, int, int, int]:
    return (Participant.objects.filter(study=study).count(), Assignment.objects.filter(item__study=study).count(),
            Response.objects.filter(item__study=study).count(), Item.objects.filter(study=study).count())


def write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def wep_study(db):
    return Study.objects.create(slug="fagen", title="Fagen-Ulmschneider 2015", instrument="wep_probability")


@pytest.fixture
def v_study(db, belem_dir, imported_nv):
    study = Study.objects.create(slug="v", title="Verifiable", reference_study=imported_nv)
    import_items(study, belem_dir / "verifiable.csv")
    return study


# --- wide files -------------------------------------------------------------------------------
def test_fagen_survey_reproduces_sileo_moens_medians(wep_study):
    summary = import_wide(wep_study, FAGEN, id_prefix="fagen-")
    assert summary.items_created == 17
    assert summary.participants == 123
    assert summary.responses == 123 * 17
    assert summary.ignored_columns == ["Your Highest Level of Education", "Your Gender Identity", "Age Range"]
    answers = human_answers(wep_study)
    medians = answers.groupby("label")["value"].median().to_dict()
    assert medians == {k: float(v) for k, v in SILEO_MEDIANS.items()}
    # the same numbers read straight from the file with pandas
    raw = pd.read_csv(FAGEN)
    assert answers["value"].sum() == pytest.approx(raw.iloc[:, :17].to_numpy().sum())
    p = Participant.objects.get(study=wep_study, prolific_pid="fagen-2")
    assert p.status == Participant.Status.COMPLETED and p.completed_at is not None
    first = dict(Response.objects.filter(participant=p).values_list("item__expression", "value"))
    assert first["almost certain"] == 60 and first["about even"] == 50 and first["chances are slight"] == 7
    assert all(Response.objects.filter(item__study=wep_study).values_list("imported", flat=True))
    # the kind's demonstrations were added (Kent's anchors)
    assert [(d.expression, d.demo_answer) for d in wep_study.demonstrations()] == [("certain", 100), ("impossible", 0)]


def test_wide_reimport_is_refused_and_changes_nothing(wep_study):
    import_wide(wep_study, FAGEN, id_prefix="fagen-")
    before = counts(wep_study)
    with pytest.raises(ImportFailed) as info:
        import_wide(wep_study, FAGEN, id_prefix="fagen-")
    assert "already in the study" in str(info.value)
    assert info.value.errors[0].line == 2
    assert counts(wep_study) == before


def fagen_with(tmp_path, cells: dict[tuple[int, int], str]):
    """A copy of the Fagen-Ulmschneider file with the cells at (0-based line, column) replaced."""
    lines = FAGEN.read_text(encoding="utf-8").splitlines()
    for (line, column), value in cells.items():
        row = lines[line].split(",")
        row[column] = value
        lines[line] = ",".join(row)
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_wide_bad_cell_names_line_and_column_and_creates_nothing(wep_study, tmp_path):
    bad = fagen_with(tmp_path, {(5, 3): "seventy", (9, 0): "101"})  # line 6 "Probable"; line 10
    with pytest.raises(ImportFailed) as info:
        import_wide(wep_study, bad)
    found = {(e.line, e.column, e.message) for e in info.value.errors}
    assert (6, '"Probable"', "'seventy' is not a number") in found
    assert (10, '"Almost Certain"', "101 is outside 0–100") in found
    assert counts(wep_study) == (0, 0, 0, 0)  # not even the items


def test_wide_blank_cells_are_skipped_but_an_empty_row_is_an_error(wep_study, tmp_path):
    path = write_csv(tmp_path / "w.csv", ["Likely", "Unlikely", "Age"],
                     [["70", "", "18-25"], ["", "", "26-35"]])
    with pytest.raises(ImportFailed) as info:
        import_wide(wep_study, path)
    assert [(e.line, e.message) for e in info.value.errors] == [(3, "the row has no answer")]
    path = write_csv(tmp_path / "w.csv", ["Likely", "Unlikely", "Age"], [["70", "", "18-25"], ["65", "20", "x"]])
    summary = import_wide(wep_study, path, id_prefix="w")
    assert (summary.participants, summary.responses, summary.ignored_columns) == (2, 3, ["Age"])


def test_wide_into_a_speaker_belief_study_without_items_is_refused(nv_study):
    with pytest.raises(ImportFailed) as info:
        import_wide(nv_study, FAGEN)
    assert "cannot create them from a wide file" in str(info.value)
    assert counts(nv_study) == (0, 0, 0, 0)


def test_wide_with_no_expression_column(wep_study, tmp_path):
    path = write_csv(tmp_path / "w.csv", ["Age", "Gender"], [["18-25", "f"]])
    with pytest.raises(ImportFailed) as info:
        import_wide(wep_study, path)
    assert "no column is an expression of the study" in str(info.value)
    assert counts(wep_study) == (0, 0, 0, 0)


def test_import_wide_command(wep_study, tmp_path):
    out = io.StringIO()
    call_command("import_wide", "fagen", str(FAGEN), stdout=out)
    assert "imported 2091 answers of 123 participants; created 17 items" in out.getvalue()
    assert Participant.objects.filter(study=wep_study, prolific_pid="survey-results-124").exists()
    with pytest.raises(CommandError, match="line 2"):
        call_command("import_wide", "fagen", str(FAGEN))
    with pytest.raises(CommandError, match="no study with slug 'nope'"):
        call_command("import_wide", "nope", str(FAGEN))
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_wide", "fagen", str(tmp_path / "missing.csv"))


# --- long files -------------------------------------------------------------------------------
def _nv_rows(study: Study, pids: list[str], per: int = 3) -> list[list]:
    items = list(study.main_items().order_by("id"))
    rows = []
    for n, pid in enumerate(pids):
        for k in range(per):
            item = items[(n * per + k) * 7]
            rows.append([pid, item.statement_id, item.label.upper() if k == 0 else item.label,
                         str(5 * ((n + k) % 21)), str(1500 + k)])
    return rows


LONG_HEADER = ["pid", "sid", "expr", "answer", "rt"]
LONG_COLS = ResponseColumns(participant="pid", statement="sid", expression="expr", value="answer", time="rt")


def test_long_import_by_statement_id(imported_nv, tmp_path):
    path = write_csv(tmp_path / "long.csv", LONG_HEADER, _nv_rows(imported_nv, ["A1", "B2"]))
    summary = import_responses(imported_nv, path, LONG_COLS)
    assert (summary.participants, summary.responses) == (2, 6)
    a1 = Participant.objects.get(study=imported_nv, prolific_pid="A1")
    assert a1.status == Participant.Status.COMPLETED and a1.completed_at is not None
    slots = list(a1.assignments.order_by("position"))
    assert [s.position for s in slots] == [1, 2, 3]
    responses = [s.responses.get() for s in slots]
    assert [r.value for r in responses] == [0, 5, 10]
    assert [r.time_taken_ms for r in responses] == [1500, 1501, 1502]
    assert all(r.imported and r.item_id == s.item_id for r, s in zip(responses, slots))
    items = list(imported_nv.main_items().order_by("id"))
    assert [s.item_id for s in slots] == [items[0].pk, items[7].pk, items[14].pk]


def test_long_import_by_rendered_text_and_seconds(imported_nv, tmp_path):
    items = list(imported_nv.main_items().order_by("id")[:4])
    rows = [["P1", item.text(), "  " + item.label + " ", "55", "2.5"] for item in items]
    path = write_csv(tmp_path / "t.csv", ["who", "sentence", "expression", "v", "secs"], rows)
    cols = ResponseColumns(participant="who", text="sentence", expression="expression", value="v", time="secs",
                           time_unit="s")
    import_responses(imported_nv, path, cols)
    saved = Response.objects.filter(participant__prolific_pid="P1").order_by("assignment__position")
    assert [r.item_id for r in saved] == [i.pk for i in items]
    assert {r.time_taken_ms for r in saved} == {2500}


def test_long_import_by_statement_text_needs_the_expression(imported_nv, tmp_path):
    item = imported_nv.main_items().exclude(is_control=True).order_by("id").first()
    path = write_csv(tmp_path / "t.csv", ["who", "statement", "v"], [["P1", item.statement, "40"]])
    with pytest.raises(ImportFailed) as info:
        import_responses(imported_nv, path, ResponseColumns(participant="who", text="statement", value="v"))
    assert info.value.errors[0].message == (f"15 items share text {item.statement!r}; they differ in expression: "
                                            "add an expression column (--expression)")
    path = write_csv(tmp_path / "t.csv", ["who", "statement", "e", "v"], [["P1", item.statement, item.label, "40"]])
    import_responses(imported_nv, path, ResponseColumns(participant="who", text="statement", expression="e", value="v"))
    assert Response.objects.get(participant__prolific_pid="P1").item == item


def test_long_import_verifiable_set_by_text(v_study, tmp_path):
    """Belem's verifiable file reuses a statement id for two different statements: ids are ambiguous there."""
    item = v_study.main_items().filter(truth="false", is_control=False).order_by("id").first()
    path = write_csv(tmp_path / "v.csv", ["pid", "sid", "expr", "answer"], [["P1", item.statement_id, item.label, "30"]])
    cols = ResponseColumns(participant="pid", statement="sid", expression="expr", value="answer")
    with pytest.raises(ImportFailed) as info:
        import_responses(v_study, path, cols)
    # the expression column was given: the message says what is shared and that the text tells the rows apart
    message = info.value.errors[0].message
    assert message.startswith(f"2 items share statement id {item.statement_id!r} and expression {item.label!r}; "
                              "they differ in statement: identify the rows by the item's text (--text")
    assert "add an expression column" not in message
    rows = [["P1", item.statement, item.label, "30", "true"]]
    path = write_csv(tmp_path / "v.csv", ["pid", "s", "expr", "answer", "t"], rows)
    cols = ResponseColumns(participant="pid", text="s", expression="expr", value="answer", truth="t")
    with pytest.raises(ImportFailed) as info:
        import_responses(v_study, path, cols)
    assert (info.value.errors[0].column, info.value.errors[0].message) == ("t", f"no item with text {item.statement!r} has truth 'true'")
    rows[0][4] = "False"
    import_responses(v_study, write_csv(tmp_path / "v.csv", ["pid", "s", "expr", "answer", "t"], rows), cols)
    assert Response.objects.get(participant__prolific_pid="P1").item == item


def test_long_import_errors_name_row_and_column_and_import_nothing(imported_nv, tmp_path):
    good = _nv_rows(imported_nv, ["A1", "B2"])
    bad = [list(r) for r in good]
    bad[1][3] = "abc"             # line 3: value not a number
    bad[2][3] = "105"             # line 4: out of range
    bad[3][1] = "no-such-id"      # line 5: unknown statement
    bad[4][2] = "fairly likely"   # line 6: unknown expression for that statement
    bad[5][4] = "-3"              # line 7: negative time
    bad.append(["", good[0][1], good[0][2], "5", ""])            # line 8: empty participant id
    bad.append(["A1", good[0][1], good[0][2], "5", ""])          # line 9: A1 answers line 2's item again
    bad.append(["C3", good[0][1], "", "5", ""])                  # line 10: empty expression
    path = write_csv(tmp_path / "bad.csv", LONG_HEADER, bad)
    with pytest.raises(ImportFailed) as info:
        import_responses(imported_nv, path, LONG_COLS)
    got = {(e.line, e.column): e.message for e in info.value.errors}
    assert got[(3, "answer")] == "'abc' is not a number"
    assert got[(4, "answer")] == "105 is outside 0–100"
    assert got[(5, "sid")] == "no item of the study has statement id 'no-such-id'"
    assert got[(6, "expr")].startswith("no item with statement id")
    assert got[(7, "rt")] == "-3 is not a time taken in ms"
    assert got[(8, "pid")] == "is empty"
    assert "again (first on line 2)" in got[(9, "pid")]
    assert got[(10, "expr")].startswith("is empty")
    assert len(got) == 8
    assert counts(imported_nv)[:3] == (0, 0, 0)


def test_importers_read_numbers_as_the_page_does(imported_nv, wep_study, tmp_path):
    """``1e2``, ``٥٠`` (Arabic-Indic 50), ``1_0`` and ``5\\n``: float() takes them, the participant page refuses
    them, and so do the importers (one rule, surveys.instruments.shapes.plain_number)."""
    good = _nv_rows(imported_nv, ["A1", "B2"])
    bad = [list(r) for r in good]
    bad[0][3], bad[1][3], bad[2][3] = "1e1", "\u0665\u0660", "1_0"
    bad[3][4] = "1e3"  # response time
    path = write_csv(tmp_path / "bad.csv", LONG_HEADER, bad)
    with pytest.raises(ImportFailed) as info:
        import_responses(imported_nv, path, LONG_COLS)
    got = {(e.line, e.column): e.message for e in info.value.errors}
    assert got[(2, "answer")] == "'1e1' is not a number" and got[(3, "answer")] == "'\u0665\u0660' is not a number"
    assert got[(4, "answer")] == "'1_0' is not a number" and got[(5, "rt")] == "'1e3' is not a number"
    assert counts(imported_nv)[:3] == (0, 0, 0)

    wide = fagen_with(tmp_path, {(5, 3): "7e1"})
    with pytest.raises(ImportFailed) as info:
        import_wide(wep_study, wide)
    assert (6, '"Probable"', "'7e1' is not a number") in {(e.line, e.column, e.message) for e in info.value.errors}


def test_long_import_missing_column_and_existing_participant(imported_nv, tmp_path):
    path = write_csv(tmp_path / "x.csv", ["pid", "sid", "answer"], [["A1", "x", "5"]])
    with pytest.raises(ImportFailed) as info:
        import_responses(imported_nv, path, LONG_COLS)
    assert {(e.line, e.column) for e in info.value.errors} == {(1, "expr"), (1, "rt")}
    path = write_csv(tmp_path / "long.csv", LONG_HEADER, _nv_rows(imported_nv, ["A1"]))
    import_responses(imported_nv, path, LONG_COLS)
    before = counts(imported_nv)
    with pytest.raises(ImportFailed, match="participant 'A1' is already in the study"):
        import_responses(imported_nv, path, LONG_COLS)
    assert counts(imported_nv) == before


def test_long_import_into_study_without_items(nv_study, tmp_path):
    path = write_csv(tmp_path / "long.csv", LONG_HEADER, [["A", "1", "likely", "5", ""]])
    with pytest.raises(ImportFailed, match="has no items"):
        import_responses(nv_study, path, LONG_COLS)


def test_long_import_by_expression_alone_in_a_wep_study(wep_study, tmp_path):
    import_wide(wep_study, write_csv(tmp_path / "w.csv", ["Likely"], [["70"]]))
    path = write_csv(tmp_path / "l.csv", ["id", "wep", "p"], [["r1", "We Doubt", "22.5"], ["r1", "likely", "71"]])
    summary = import_responses(wep_study, path, ResponseColumns(participant="id", expression="wep", value="p"))
    assert summary.responses == 2
    assert dict(Response.objects.filter(participant__prolific_pid="r1").values_list("item__expression", "value")) \
        == {"we doubt": 22.5, "likely": 71.0}


def test_import_responses_command(imported_nv, tmp_path):
    path = write_csv(tmp_path / "long.csv", LONG_HEADER, _nv_rows(imported_nv, ["A1", "B2"]))
    out = io.StringIO()
    call_command("import_responses", "nv", str(path), "--participant", "pid", "--statement", "sid",
                 "--expression", "expr", "--value", "answer", "--time", "rt", stdout=out)
    assert "imported 6 answers of 2 participants" in out.getvalue()
    with pytest.raises(CommandError, match="line 2, column 'pid'"):
        call_command("import_responses", "nv", str(path), "--participant", "pid", "--statement", "sid",
                     "--expression", "expr", "--value", "answer")
    with pytest.raises(CommandError):
        call_command("import_responses", "nv", str(path), "--participant", "pid", "--statement", "sid",
                     "--text", "sid", "--value", "answer")


def test_database_refuses_a_second_response_for_the_same_item(imported_nv, tmp_path):
    """The constraints behind the importer's duplicate check: one slot per (participant, item), one
    response per (participant, item), and no new answer for an imported (completed) participant."""
    from django.db import IntegrityError, transaction

    path = write_csv(tmp_path / "long.csv", LONG_HEADER, _nv_rows(imported_nv, ["A1"]))
    import_responses(imported_nv, path, LONG_COLS)
    slot = Assignment.objects.filter(participant__prolific_pid="A1").first()
    participant = slot.participant
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(participant=participant, item=slot.item, position=99)
    Participant.objects.filter(pk=participant.pk).update(status=Participant.Status.STARTED)  # even while answering
    with pytest.raises(IntegrityError, match="UNIQUE|unique|duplicate"), transaction.atomic():
        Response.objects.create(assignment=slot, participant=participant, item=slot.item, value=5)
    Participant.objects.filter(pk=participant.pk).update(status=Participant.Status.COMPLETED)
    other = Assignment.objects.create(participant=participant, item=imported_nv.main_items().last(), position=99)
    with pytest.raises(IntegrityError, match="not answering"), transaction.atomic():
        Response.objects.create(assignment=other, participant=participant, item=other.item, value=5)
    assert Response.objects.filter(participant=participant).count() == 3


def test_the_tang_kind_keeps_every_respondent_unless_the_filter_is_turned_on(wep_study):
    """Belem's attention filter belongs to the Belem design: a WEP-probability study (Tang et al., the
    Fagen-Ulmschneider survey) keeps all 123 respondents by default, and its report says which filter ran."""
    from families.belem.attention import apply_attention_filter

    import_wide(wep_study, FAGEN, id_prefix="fagen-")
    off = apply_attention_filter(wep_study)
    assert not off.applied and (off.evaluated, off.included, len(off.excluded)) == (123, 123, 0)
    assert "every completed participant is kept" in off.describe()
    assert Participant.objects.filter(study=wep_study, attention_included=True).count() == 123
    wep_study.attention_filter = True
    wep_study.save()
    on = apply_attention_filter(wep_study)
    assert on.applied and on.included < 123 and on.included + len(on.excluded) == 123
    assert "ρ > 0.2" in on.describe()
