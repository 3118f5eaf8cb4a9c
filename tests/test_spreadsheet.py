"""CSV exports escape cells a spreadsheet would run as formulas (OWASP CSV injection); Parquet keeps the
values as they are; the project's CSV reader gives back the original."""
from __future__ import annotations

import csv
import io

import pandas as pd
import pytest

from analysis.exports import csv_chunks, export_study, read_csv
from surveys.models import Assignment, Item, Participant, Response, Study
from surveys.raw_export import csv_lines, raw_rows
from surveys.spreadsheet import safe_cell, unescape_cell

FORMULAS = ["=HYPERLINK(\"http://x\",\"y\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)", "\t=1", "\r=1",
            # full-width and small forms, which spreadsheets in East Asian locales run as well
            "＝HYPERLINK(\"http://x\")", "＋1+1", "－2+3", "＠SUM(A1:A9)", "﹦1+1", "﹢1", "﹣1+1"]


@pytest.mark.parametrize("text", FORMULAS)
def test_formulas_are_escaped_and_restored(text):
    assert safe_cell(text) == "'" + text and unescape_cell(safe_cell(text)) == text


@pytest.mark.parametrize("text", ["-5", "+1e3", "-0.5", "plain", "", "'quoted", "'-5", "a=b"])
def test_numbers_and_plain_text_are_left_alone(text):
    assert safe_cell(text) == text and unescape_cell(text) == text


def test_an_escape_that_was_already_there_survives_the_round_trip():
    assert unescape_cell(safe_cell("'=1")) == "'=1" and unescape_cell(safe_cell("''=1")) == "''=1"


@pytest.fixture
def formula_study(db):
    study = Study.objects.create(slug="f", title="F")
    item = Item.objects.create(study=study, key="=k", expression="likely", statement="=1+1 is two.",
                               statement_id="=HYPERLINK(\"http://x\")", statement_type="@t")
    participant = Participant.objects.create(study=study, prolific_pid="P1")
    slot = Assignment.objects.create(participant=participant, item=item, position=1, speaker_name="+Eve")
    Response.objects.create(assignment=slot, participant=participant, item=item, value=-0.0 + 40)
    return study


def test_raw_responses_csv_escapes_formulas(formula_study):
    text = "".join(csv_lines(raw_rows(formula_study)))
    header, row = list(csv.reader(io.StringIO(text)))
    cells = dict(zip(header, row))
    assert cells["item_key"] == "'=k" and cells["statement_id"] == "'=HYPERLINK(\"http://x\")"
    assert cells["statement_type"] == "'@t" and cells["speaker_shown"] == "'+Eve"
    assert cells["value"] == "40"
    assert not [c for c in row if c and c[0] in "=+-@"]


def test_combined_export_escapes_csv_but_not_parquet(formula_study, tmp_path):
    export_study(formula_study, "csv", tmp_path / "a.csv")
    export_study(formula_study, "parquet", tmp_path / "a.parquet")
    with open(tmp_path / "a.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["statement_id"] == "'=HYPERLINK(\"http://x\")" and rows[0]["item_key"] == "'=k"
    parquet = pd.read_parquet(tmp_path / "a.parquet")
    assert parquet["statement_id"].tolist() == ["=HYPERLINK(\"http://x\")"]
    pd.testing.assert_frame_equal(read_csv(tmp_path / "a.csv"), parquet, check_exact=True)
