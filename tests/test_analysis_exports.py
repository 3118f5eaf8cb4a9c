"""The combined export: one long table of humans and models, CSV and Parquet, streamed, hashed ids."""
from __future__ import annotations

import csv
import hashlib
import hmac
import io
import itertools
import json
import math

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from analysis import exports
from analysis.exports import (COLUMNS, SCHEMA, csv_chunks, export_rows, export_study, parquet_chunks, read_csv,
                              study_layout)
from elicitation.models import ElicitationRun, ModelResponse
from surveys.models import Participant, Response
from test_analysis_factories import add_participant, add_run, nv_and_v

SALT = "test-salt"


@pytest.fixture
def studies(imported_nv, belem_dir, settings):
    settings.EXPORT_ID_SALT = SALT
    nv, v = nv_and_v(imported_nv, belem_dir)
    # a participant who returned the study half way: exported with their status, not filtered
    items = list(nv.main_items().order_by("id")[:3])
    add_participant(nv, "gone-away", [(items[0], 40), (items[1], 45)], status=Participant.Status.RETURNED)
    # requests that gave no answer are not rows of the export
    add_run(nv, "broken", [(items[0], None, 0, None, ModelResponse.Status.FAILED),
                           (items[1], None, 0, None, ModelResponse.Status.PENDING),
                           (items[2], 35.0)])
    return nv, v


def expected_rows(study) -> int:
    humans = Response.objects.filter(item__study=study).count()
    models = ModelResponse.objects.filter(run__study=study, status__in=["ok", "unparseable"]).count()
    return humans + models


def hashed(pid: str) -> str:
    return hmac.new(SALT.encode(), pid.encode(), hashlib.sha256).hexdigest()[:16]


def test_parquet_is_typed_and_agrees_with_csv(studies, tmp_path):
    nv, _ = studies
    n_csv = export_study(nv, "csv", tmp_path / "a.csv")
    n_pq = export_study(nv, "parquet", tmp_path / "a.parquet")
    assert n_csv == n_pq == expected_rows(nv)
    schema = pq.read_schema(tmp_path / "a.parquet")
    layout = study_layout(nv)
    assert schema.names[:len(COLUMNS)] == COLUMNS and schema.names == layout.columns  # the study's columns after
    assert [f.type for f in schema][:len(SCHEMA)] == [f.type for f in SCHEMA]
    assert [f.type for f in schema] == [f.type for f in layout.schema]
    assert schema.field("distribution").type == pa.string() and schema.field("timestamp").type == pa.timestamp("us", tz="UTC")
    df = pd.read_parquet(tmp_path / "a.parquet")
    assert len(df) == n_pq
    assert not [c for c in df.columns if df[c].dtype == object], df.dtypes
    assert str(df["item_id"].dtype) == "Int64" and str(df["included"].dtype) == "boolean"
    assert str(df["value"].dtype) == "float64" and str(df["timestamp"].dtype) == "datetime64[us, UTC]"
    from_csv = read_csv(tmp_path / "a.csv", layout)
    pd.testing.assert_frame_equal(from_csv, df, check_exact=True)


def test_rows_hold_the_right_values(studies, tmp_path):
    nv, _ = studies
    export_study(nv, "parquet", tmp_path / "a.parquet")
    df = pd.read_parquet(tmp_path / "a.parquet")
    humans, models = df[df["respondent_type"] == "human"], df[df["respondent_type"] == "model"]
    assert len(humans) == Response.objects.filter(item__study=nv).count()
    # one human answer, compared field by field with the database
    r = Response.objects.filter(participant__prolific_pid="nv3").select_related("item", "participant").first()
    row = humans[(humans["respondent_id"] == hashed("nv3")) & (humans["item_id"] == r.item_id)].iloc[0]
    assert row["value"] == r.value and row["bin"] == nv.kind.score(r.value)
    assert row["expression"] == r.item.label and row["statement_id"] == r.item.statement_id
    assert pd.isna(row["truth"]) and row["kind"] == "speaker_belief" and row["study"] == "nv"
    assert row["time_taken_ms"] == r.time_taken_ms and bool(row["included"]) is True
    assert row["participant_status"] == "completed" and row["agent"] == "human" and pd.isna(row["model"])
    # the contrarian is exported, flagged as excluded; the returned participant has no decision
    assert not humans.loc[humans["respondent_id"] == hashed("nv-spam"), "included"].any()
    gone = humans[humans["respondent_id"] == hashed("gone-away")]
    assert len(gone) == 2 and gone["included"].isna().all() and (gone["participant_status"] == "returned").all()
    # models: answers only (failed and pending requests are not answers), unparseable kept with its raw text
    assert set(models["agent"]) == {"modelx (greedy)", "logprobs (top_logprobs)", "broken (greedy)"}
    assert (models.loc[models["agent"] == "broken (greedy)", "value"] == 35).all()
    bad = models[models["status"] == "unparseable"]
    assert len(bad) == 1 and math.isnan(bad["value"].iloc[0]) and bad["raw_text"].iloc[0] == "no idea"
    dist = models[models["mode"] == "top_logprobs"]
    assert json.loads(dist["distribution"].iloc[0]) == {"50": 0.5, "55": 0.3, "-1": 0.2}
    assert list(json.loads(dist["distribution"].iloc[0])) == ["50", "55", "-1"]
    assert (models["sample_index"] == 0).all() and models["run_id"].notna().all()
    assert set(models["respondent_id"]) == {f"run-{r}" for r in ElicitationRun.objects.filter(study=nv).values_list("pk", flat=True)}
    assert humans["run_id"].isna().all() and models["participant_status"].isna().all()


def test_hashed_ids_stable_and_raw_ids_only_when_asked(studies, tmp_path, settings):
    nv, _ = studies
    pids = set(Participant.objects.filter(study=nv).values_list("prolific_pid", flat=True))
    export_study(nv, "csv", tmp_path / "a.csv")
    export_study(nv, "csv", tmp_path / "b.csv")
    a, b = read_csv(tmp_path / "a.csv"), read_csv(tmp_path / "b.csv")
    ids = set(a.loc[a["respondent_type"] == "human", "respondent_id"])
    assert ids == {hashed(p) for p in pids} and not ids & pids
    assert a["respondent_id"].equals(b["respondent_id"])  # stable
    text = (tmp_path / "a.csv").read_text()
    assert not any(f",{p}," in text for p in pids)
    settings.EXPORT_ID_SALT = "another-salt"
    export_study(nv, "csv", tmp_path / "c.csv")
    assert not set(read_csv(tmp_path / "c.csv")["respondent_id"]) & ids
    export_study(nv, "parquet", tmp_path / "raw.parquet", raw_ids=True)
    raw = pd.read_parquet(tmp_path / "raw.parquet")
    assert set(raw.loc[raw["respondent_type"] == "human", "respondent_id"]) == pids


def test_writers_stream_in_chunks_and_row_groups(studies, tmp_path):
    nv, _ = studies
    layout = study_layout(nv)
    rows = list(export_rows(nv, layout=layout))
    n = exports.write_parquet(iter(rows), tmp_path / "g.parquet", row_group_size=7, layout=layout)
    meta = pq.ParquetFile(tmp_path / "g.parquet").metadata
    assert meta.num_rows == n == len(rows) and meta.num_row_groups == math.ceil(len(rows) / 7)
    pieces = list(parquet_chunks(iter(rows), row_group_size=100, layout=layout))
    assert len(pieces) == math.ceil(len(rows) / 100) + 1  # one per row group, then the footer
    streamed = pd.read_parquet(io.BytesIO(b"".join(pieces)))
    pd.testing.assert_frame_equal(streamed, pd.read_parquet(tmp_path / "g.parquet"))
    text = list(csv_chunks(iter(rows), chunk_rows=50, layout=layout))
    assert len(text) == math.ceil(len(rows) / 50) + (len(rows) % 50 == 0)
    assert len(list(csv.reader(io.StringIO("".join(text))))) == len(rows) + 1


def test_writers_emit_before_the_rows_run_out(studies):
    """Nothing is gathered first: the first piece leaves before later rows are even produced."""
    nv, _ = studies
    layout = study_layout(nv)
    first = list(itertools.islice(export_rows(nv, layout=layout), 12))

    def rows_then_failure():
        yield from first
        raise RuntimeError("rows beyond the first chunk were requested too early")

    assert next(csv_chunks(rows_then_failure(), chunk_rows=5, layout=layout)).count("\n") == 6  # header + 5 rows
    assert next(parquet_chunks(rows_then_failure(), row_group_size=5, layout=layout))[:4] == b"PAR1"


def test_empty_study_exports_a_header_and_an_empty_typed_file(nv_study, tmp_path):
    assert export_study(nv_study, "csv", tmp_path / "e.csv") == 0
    columns = study_layout(nv_study).columns
    assert (tmp_path / "e.csv").read_text().strip() == ",".join(columns)
    assert columns[:len(COLUMNS)] == COLUMNS
    assert export_study(nv_study, "parquet", tmp_path / "e.parquet") == 0
    df = pd.read_parquet(tmp_path / "e.parquet")
    assert list(df.columns) == columns and len(df) == 0
    assert pd.read_parquet(io.BytesIO(b"".join(exports.stream_study(nv_study, "parquet")))).empty


def test_export_command(studies, tmp_path):
    nv, _ = studies
    out = io.StringIO()
    call_command("export", "nv", "--format", "parquet", "--out", str(tmp_path / "x.parquet"), stdout=out)
    assert f"wrote {expected_rows(nv)} rows (hashed participant ids)" in out.getvalue()
    call_command("export", "nv", "--out", str(tmp_path / "x.csv"), "--raw-ids", stdout=out)
    raw = read_csv(tmp_path / "x.csv")
    assert "nv0" in set(raw["respondent_id"])
    with pytest.raises(Exception, match="no such folder"):
        call_command("export", "nv", "--out", str(tmp_path / "missing" / "x.csv"))


def test_export_brings_the_attention_decisions_up_to_date(studies, tmp_path):
    nv, _ = studies
    Participant.objects.filter(study=nv).update(attention_included=None, attention_rho=None)
    export_study(nv, "csv", tmp_path / "a.csv")
    df = read_csv(tmp_path / "a.csv")
    done = df[(df["respondent_type"] == "human") & (df["participant_status"] == "completed")]
    assert done["included"].notna().all() and not done["included"].all() and done["included"].any()
