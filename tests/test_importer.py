"""Item import (surveys.importers + `manage.py import_items`): the real Belem files import exactly,
and every kind of malformed file is refused whole, naming the line and column."""
from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from surveys.importers import ImportFailed, import_items
from surveys.models import Item, Study

pytestmark = pytest.mark.django_db


def real_rows(belem_dir: Path, name: str) -> tuple[list[str], list[dict[str, str]]]:
    with open(belem_dir / f"{name}.csv", newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def write_rows(path: Path, header: list[str], rows: list[dict[str, str]], encoding: str = "utf-8") -> list[int]:
    """Write a CSV file; return the line (header = 1) on which each data row starts.

    The Belem rows hold line breaks inside quoted cells, so rows and lines differ; the lines are
    counted here from what the csv writer produced, independently of the importer.
    """
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=header, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    starts = []
    for row in rows:
        starts.append(buffer.getvalue().count("\n") + 1)
        writer.writerow(row)
    path.write_bytes(buffer.getvalue().encode(encoding))
    return starts


@pytest.fixture
def nv_rows(belem_dir):
    return real_rows(belem_dir, "non-verifiable")


@pytest.fixture
def study(db):
    return Study.objects.create(slug="imp", title="Import target")


def failed_import(study: Study, path: Path) -> ImportFailed:
    """Import ``path``, expect ImportFailed and that the study is unchanged."""
    before = sorted(study.items.values_list("key", flat=True))
    with pytest.raises(ImportFailed) as info:
        import_items(study, path)
    assert sorted(study.items.values_list("key", flat=True)) == before, "a failed import changed the study"
    return info.value


# --- the real files ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["non-verifiable", "verifiable"])
def test_real_file_imports_exactly(belem_dir, study, name):
    header, rows = real_rows(belem_dir, name)
    result = import_items(study, belem_dir / f"{name}.csv")

    assert result.created == 900
    assert result.controls == 60
    items = list(study.main_items())
    assert len(items) == 900
    assert sum(i.is_control for i in items) == 60
    assert all(i.expression == "" for i in items if i.is_control)
    assert Counter(i.expression for i in items if not i.is_control) == Counter(
        r["uncertainty_expression"] for r in rows if r["is_control"] == "False"
    )
    truths = Counter(i.truth for i in items)
    if name == "verifiable":
        assert truths == {"true": 450, "false": 450}
        assert result.by_truth == {"true": 450, "false": 450}
        for item in items:
            assert item.statement_type.endswith(f"__{item.truth}")
    else:
        assert truths == {"": 900}
        assert result.by_truth == {"none": 900}

    # the rendered wording is the file's own text, row by row (pronouns filled, no placeholder left)
    by_row = {i.source_row: i for i in items}
    for number, row in enumerate(rows, start=2):
        item = by_row[number]
        assert item.text() == row["prompt_example"]
        assert item.kind.question(item) == row["prompt_instruction"]
        assert item.kind.hints(item) == [row["prompt_instruction_0"].removeprefix("- "),
                                         row["prompt_instruction_100"].removeprefix("- ")]
        assert "[[" not in item.text()
        assert item.speaker_name == row["name"] and item.statement_id == row["statement_id"]


# Belem et al., App. C.3 (studies/belem/paper-demonstrations.toml)
PAPER_PAIRS = {
    "non-verifiable": [("Kathleen", "female", "impossible", "the cafe made a profit in the last 6 months.", 0),
                       ("Cedric", "male", "certain", "the new treatment will improve the patient's condition.", 100)],
    "verifiable": [("Kathleen", "female", "impossible", "the Sun orbits around the planet Earth.", 0),
                   ("Cedric", "male", "certain", "all metals can conduct electricity.", 100)],
}


@pytest.mark.parametrize("name", ["non-verifiable", "verifiable"])
def test_paper_demonstrations_added_when_study_has_none(belem_dir, study, name):
    result = import_items(study, belem_dir / f"{name}.csv")
    demos = study.demonstrations()
    assert result.demonstrations_added == 2
    assert [(d.speaker_name, d.speaker_gender, d.expression, d.statement, d.demo_answer) for d in demos] == \
        PAPER_PAIRS[name]
    assert study.items.count() == 902


def test_own_demonstrations_are_kept(belem_dir, study, nv_rows, tmp_path):
    Item.objects.create(study=study, key="mine-1", is_demonstration=True, demo_order=1, demo_answer=100,
                        expression="certain", speaker_name="Ada", speaker_gender="female",
                        statement="the sun will rise tomorrow.")
    header, rows = nv_rows
    write_rows(tmp_path / "few.csv", header, rows[:5])
    result = import_items(study, tmp_path / "few.csv")
    assert result.created == 5 and result.demonstrations_added == 0
    assert [d.key for d in study.demonstrations()] == ["mine-1"]


def test_command_imports_and_reports(belem_dir, study, capsys):
    call_command("import_items", study.slug, str(belem_dir / "verifiable.csv"))
    out = capsys.readouterr().out
    assert "imported 900 items into imp (60 controls; truth false: 450, true: 450)" in out
    assert study.main_items().count() == 900


def test_blank_lines_and_bom_are_accepted(study, nv_rows, tmp_path):
    header, rows = nv_rows
    path = tmp_path / "bom.csv"
    write_rows(path, header, rows[:3])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes() + b"\n\n")
    assert import_items(study, path).created == 3


# --- malformed files: nothing imported, line and column named -------------------------------------

def only_error(exc: ImportFailed):
    assert len(exc.errors) == 1, exc.errors
    return exc.errors[0]


def test_missing_column(study, nv_rows, tmp_path):
    header, rows = nv_rows
    write_rows(tmp_path / "f.csv", [h for h in header if h != "statement"], rows[:4])
    error = only_error(failed_import(study, tmp_path / "f.csv"))
    assert (error.line, error.column) == (1, "statement")
    assert "missing" in error.message


def test_semicolon_file_gets_a_hint(study, tmp_path):
    (tmp_path / "f.csv").write_text("statement_type;name;gender;statement\nfuture;Ann;female;x\n")
    exc = failed_import(study, tmp_path / "f.csv")
    assert {e.column for e in exc.errors} >= {"statement", "is_control", "uncertainty_expression"}
    assert "';'" in exc.errors[0].message


@pytest.mark.parametrize("column,value,fragment", [
    ("statement", "", "is empty"),
    ("statement", "   ", "is empty"),
    ("is_control", "maybe", "'maybe' is not True or False"),
    ("uncertainty_expression", "quite likely", "is not one of the 14 expressions"),
    ("uncertainty_expression", "control", "does not match is_control"),
    ("pronouns", "{'their': 'her', 'they': ", "is not a dict"),
    ("pronouns", "{[]: 'she'}", "is not a dict"),
    ("pronouns", "['she', 'her']", "is not a dict"),
    ("pronouns", "{'their': 'her'}", "no pronoun for [[they]]"),
    ("gender", "robot", "is not one of"),
    ("statement_id", "", "is empty"),
    # longer than the Item column allows (PostgreSQL: a DataError, HTTP 500, without this check)
    ("statement_id", "s" * 150, "150 characters; at most 100 are allowed"),
    ("statement_type", "t" * 101, "101 characters; at most 100 are allowed"),
    ("name", "N" * 120, "120 characters; at most 100 are allowed"),
])
def test_bad_cell_names_line_and_column(study, nv_rows, tmp_path, column, value, fragment):
    header, rows = nv_rows
    rows = [dict(r) for r in rows if "[[they]]" in r["statement"] and r["is_control"] == "False"][:7]
    rows[6][column] = value  # the LAST row: earlier rows would have been saved by a non-atomic import
    starts = write_rows(tmp_path / "f.csv", header, rows)
    error = only_error(failed_import(study, tmp_path / "f.csv"))
    assert (error.line, error.row, error.column) == (starts[6], 8, column)
    assert fragment in error.message
    assert str(error).startswith(f"line {starts[6]} (spreadsheet row 8), column {column!r}: ")


def test_unknown_placeholder(study, nv_rows, tmp_path):
    header, rows = nv_rows
    rows = [dict(r) for r in rows[1:3]]
    rows[1]["statement"] = "[[them]] will visit the museum."
    starts = write_rows(tmp_path / "f.csv", header, rows)
    error = only_error(failed_import(study, tmp_path / "f.csv"))
    assert (error.line, error.column) == (starts[1], "statement")
    assert "[[them]]" in error.message


def test_duplicated_row(study, nv_rows, tmp_path):
    header, rows = nv_rows
    rows = rows[:4] + [rows[1]]
    starts = write_rows(tmp_path / "f.csv", header, rows)
    error = only_error(failed_import(study, tmp_path / "f.csv"))
    assert (error.line, error.column) == (starts[4], "statement_id")
    assert f"same item as line {starts[1]}" in error.message


def test_duplicated_row_without_uuid(study, nv_rows, tmp_path):
    header, rows = nv_rows
    header = [h for h in header if h != "statement_uuid"]
    starts = write_rows(tmp_path / "f.csv", header, rows[:3] + [rows[2]])
    error = only_error(failed_import(study, tmp_path / "f.csv"))
    assert (error.line, error.column) == (starts[3], "statement_id")


def test_row_already_in_the_study(study, nv_rows, tmp_path):
    header, rows = nv_rows
    write_rows(tmp_path / "first.csv", header, rows[:5])
    import_items(study, tmp_path / "first.csv")
    assert study.items.count() == 5 + 2
    starts = write_rows(tmp_path / "second.csv", header, rows[5:8] + [rows[3]])
    error = only_error(failed_import(study, tmp_path / "second.csv"))
    assert (error.line, error.column) == (starts[3], "statement_id")
    assert "already in study imp" in error.message
    assert study.items.count() == 7


def test_same_file_twice_reports_every_row(belem_dir, study):
    import_items(study, belem_dir / "non-verifiable.csv")
    exc = failed_import(study, belem_dir / "non-verifiable.csv")
    assert exc.total == 900
    assert "… and 880 more" in str(exc)


def test_non_utf8_file(study, nv_rows, tmp_path):
    header, rows = nv_rows
    rows = [dict(r) for r in rows[1:4]]
    rows[2]["statement"] = "[[they]] will order a crème brûlée at the café."
    write_rows(tmp_path / "f.csv", header, rows, encoding="latin-1")
    error = only_error(failed_import(study, tmp_path / "f.csv"))
    assert error.line == 1 and "not UTF-8" in error.message


def change_record(path: Path, index: int, change) -> None:
    """Rewrite the CSV record ``index`` (0: the header) of ``path`` as ``change(cells)``."""
    records = list(csv.reader(io.StringIO(path.read_text(), newline="")))
    records[index] = change(records[index])
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows(records)
    path.write_text(out.getvalue())


@pytest.mark.parametrize("change,word", [(lambda cells: cells + ["extra"], "more"),
                                         (lambda cells: cells[:-3], "fewer")])
def test_ragged_row(study, nv_rows, tmp_path, change, word):
    header, rows = nv_rows
    starts = write_rows(tmp_path / "f.csv", header, rows[:4])
    change_record(tmp_path / "f.csv", 3, change)  # the third data row: one cell too many / three too few
    error = only_error(failed_import(study, tmp_path / "f.csv"))
    assert (error.line, error.row, error.column) == (starts[2], 4, "-")
    assert word in error.message


def test_unterminated_quote(study, tmp_path, nv_rows):
    header, rows = nv_rows
    write_rows(tmp_path / "f.csv", header, rows[:2])
    (tmp_path / "f.csv").write_text((tmp_path / "f.csv").read_text() + 'future,"Ann,female\n')
    exc = failed_import(study, tmp_path / "f.csv")
    assert exc.errors


def test_every_bad_row_is_reported(study, nv_rows, tmp_path):
    """One pass: a short row and the bad cells of the other rows come together, in line order (the short row
    does not hide the others)."""
    header, rows = nv_rows
    rows = [dict(r) for r in rows[1:6]]
    rows[0]["is_control"] = "perhaps"
    rows[3]["uncertainty_expression"] = "sure thing"
    rows[4]["gender"] = "robot"
    starts = write_rows(tmp_path / "f.csv", header, rows)
    change_record(tmp_path / "f.csv", 3, lambda cells: cells[:-2])  # the third data row: two cells short
    exc = failed_import(study, tmp_path / "f.csv")
    assert [(e.line, e.column) for e in exc.errors] == [(starts[0], "is_control"), (starts[2], "-"),
                                                        (starts[3], "uncertainty_expression"), (starts[4], "gender")]
    assert "fewer" in exc.errors[1].message and exc.total == 4


def test_many_errors_are_reported_up_to_the_cap_with_their_total(study, tmp_path):
    from surveys.importers import MAX_REPORTED_ERRORS

    lines = ["statement_type,name,gender,pronouns,is_control,uncertainty_expression,statement_id,statement"]
    lines += [f"future,Ann,female,,maybe,likely,s{n},[[they]] will win." for n in range(30)]
    lines += ["future,Ann,female"]  # short
    (tmp_path / "f.csv").write_text("\n".join(lines) + "\n")
    exc = failed_import(study, tmp_path / "f.csv")
    assert exc.total == 31 and len(exc.errors) == 31
    message = str(exc)
    assert message.startswith("nothing imported: 31 error(s)") and message.count("\n  line ") == MAX_REPORTED_ERRORS
    assert message.endswith(f"… and {31 - MAX_REPORTED_ERRORS} more")


def test_empty_file(study, nv_rows, tmp_path):
    header, _ = nv_rows
    write_rows(tmp_path / "f.csv", header, [])
    assert "no rows" in only_error(failed_import(study, tmp_path / "f.csv")).message


def test_simple_file_lines_equal_rows(study, tmp_path):
    """A file without line breaks in cells: line and spreadsheet row agree and only the line is named."""
    (tmp_path / "f.csv").write_text(
        "statement_type,name,gender,pronouns,is_control,uncertainty_expression,statement_id,statement\n"
        "future,Ann,female,,False,likely,f1,[[they]] will win.\n"
        "\n"
        "future,Bob,male,,False,likely,f2,\n"
    )
    error = only_error(failed_import(study, tmp_path / "f.csv"))
    assert (error.line, error.row, error.column) == (4, 4, "statement")
    assert str(error) == "line 4, column 'statement': is empty"


def test_command_error_names_line_and_column(study, nv_rows, tmp_path):
    header, rows = nv_rows
    rows = [dict(r) for r in rows[:3]]
    rows[1]["uncertainty_expression"] = "quite likely"
    starts = write_rows(tmp_path / "f.csv", header, rows)
    with pytest.raises(CommandError, match=rf"(?s)nothing imported.*line {starts[1]} \(spreadsheet row 3\), "
                                           r"column 'uncertainty_expression'"):
        call_command("import_items", study.slug, str(tmp_path / "f.csv"))
    assert study.items.count() == 0


def test_command_unknown_study_and_file(tmp_path, db):
    with pytest.raises(CommandError, match="no study with slug 'nope'"):
        call_command("import_items", "nope", str(tmp_path / "x.csv"))
    Study.objects.create(slug="s", title="S")
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_items", "s", str(tmp_path / "missing.csv"))


@pytest.mark.django_db
def test_command_says_only_what_the_items_hold(tmp_path, capsys):
    """Questions without controls or truth values: "imported 6 items into q", not "(0 controls; truth none: 6)"
    (walk of issue 23, own-study tutorial); the Belem breakdown is kept (test_command_imports_and_reports)."""
    q = Study.objects.create(slug="q", title="Q", instrument="interval_confidence")
    (tmp_path / "q.csv").write_text("id,question,answer\neverest,How high is Mount Everest (in metres)?,8849\n",
                                    encoding="utf-8")
    call_command("import_items", "q", str(tmp_path / "q.csv"))
    out = capsys.readouterr().out
    assert "imported 5 items into q\n" in out and "controls" not in out and "truth" not in out
