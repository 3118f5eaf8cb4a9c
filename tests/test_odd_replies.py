"""Replies no database column takes as they are (issue 24.8, 24.9): a model answer with NUL characters is
kept with them escaped (and the row says so); a body that is not UTF-8 is a malformed reply: retried, then
failed with the reason and the raw bytes kept, escaped. Run on PostgreSQL too (DATABASE_URL), where a NUL in
text is refused by the database itself."""
from __future__ import annotations

import io

import pytest

from elicitation.models import ModelResponse
from elicitation.runs import create_run, run_sync, start_run
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from test_import_model_answers import wep_study  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


def run_on(study, endpoint, n: int):
    run = create_run(study, endpoint, items=list(study.main_items().order_by("id")[:n]))
    start_run(run, queue=False)
    return run_sync(run)


def test_a_model_answer_with_nul_is_kept_escaped_and_flagged(stub, imported_nv):
    stub.queue(Reply.answer("70\x00 percent"), Reply.answer("\x00\x00"))
    run = run_on(imported_nv, make_endpoint(stub), 2)
    parsed, unparsed = ModelResponse.objects.filter(run=run).order_by("item_id")
    assert (parsed.status, parsed.value, parsed.raw_output) == ("ok", 70, "70\\u0000 percent")
    assert parsed.detail["escaped_nul"] == ["raw_output"]
    assert unparsed.status == "unparseable" and unparsed.raw_output == "\\u0000\\u0000"
    assert unparsed.detail["escaped_nul"] == ["raw_output"]
    assert "\x00" not in unparsed.parse_error


def test_an_answer_without_nul_is_stored_as_it_came(stub, imported_nv):
    stub.queue(Reply.answer("a \\u0000 written out, 40"))
    row = ModelResponse.objects.get(run=run_on(imported_nv, make_endpoint(stub), 1))
    assert row.raw_output == "a \\u0000 written out, 40" and "escaped_nul" not in (row.detail or {})


NOT_UTF8 = b'{"id": "x", "object": "chat.completion", "choices": [{"message": {"content": "caf\xe9 50"}}]}'


def test_a_body_that_is_not_utf8_is_retried_then_failed_with_its_bytes(stub, imported_nv):
    stub.queue(Reply.garbage(NOT_UTF8, "application/json"), Reply.answer("45"),
               *[Reply.garbage(NOT_UTF8, "application/json")] * 3)
    run = run_on(imported_nv, make_endpoint(stub, max_retries=2, retry_backoff_seconds=0.01), 2)
    first, second = ModelResponse.objects.filter(run=run).order_by("item_id")
    assert (first.status, first.value, first.attempts) == ("ok", 45, 2)
    assert first.detail["attempt_errors"][0].startswith("attempt 1: malformed response (not UTF-8")
    assert (second.status, second.attempts) == ("failed", 3)
    assert second.error.startswith("malformed response (not UTF-8") and "byte" in second.error
    assert "caf\\xe9 50" in second.raw_output  # the raw bytes, the undecodable one escaped
    assert run.status == "failed" and "internal error" not in second.error


# --- imports refuse NUL, naming line and column ---------------------------------------------------------
def test_an_item_csv_with_nul_names_line_and_column(nv_study):
    from surveys.importers import ImportFailed, import_items

    csv = ("statement_type,name,gender,pronouns,is_control,uncertainty_expression,statement_id,statement\n"
           "future,Ana,female,\"{'they': 'she'}\",False,likely,s1,it rains\n"
           "future,Ana\x00,female,\"{'they': 'she'}\",False,likely,s2,it sn\x00ows\n")
    with pytest.raises(ImportFailed) as info:
        import_items(nv_study, io.StringIO(csv))
    assert [(e.line, e.column) for e in info.value.errors] == [(3, "name"), (3, "statement")]
    assert "NUL" in info.value.errors[0].message and not nv_study.items.exists()


def test_answer_imports_with_nul_name_line_and_column(imported_nv, tmp_path):
    from surveys.answer_import import ResponseColumns, import_responses, import_wide
    from surveys.importers import ImportFailed
    from surveys.models import Participant

    item = imported_nv.main_items().first()
    long = f"pid,expr,sid,answer\nP1,{item.expression},{item.statement_id},50\nP\x002,{item.expression},{item.statement_id},60\n"
    with pytest.raises(ImportFailed) as info:
        import_responses(imported_nv, io.StringIO(long), ResponseColumns(participant="pid", value="answer",
                                                                            expression="expr", statement="sid"))
    assert [(e.line, e.column) for e in info.value.errors] == [(3, "pid")]
    with pytest.raises(ImportFailed, match="id prefix"):
        import_wide(imported_nv, io.StringIO("likely\n50\n"), id_prefix="a\x00-")
    assert not Participant.objects.exists()


def test_model_answer_files_with_nul_name_line_and_column(wep_study, tmp_path):  # noqa: F811
    from analysis.model_answer_import import ModelAnswerFile, import_model_answers
    from surveys.importers import ImportFailed

    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text('{"expression": "likely", "answer": "70"}\n{"expression": "likely", "answer": "7\\u00000"}\n')
    with pytest.raises(ImportFailed) as info:
        import_model_answers(wep_study, jsonl, ModelAnswerFile(model="x"))
    assert [(e.line, e.column) for e in info.value.errors] == [(2, "answer")]
    csv = tmp_path / "a.csv"
    csv.write_text("expression,answer\nlikely,70\nunlikely,2\x000\n")
    with pytest.raises(ImportFailed) as info:
        import_model_answers(wep_study, csv, ModelAnswerFile(model="x"))
    assert [(e.line, e.column) for e in info.value.errors] == [(3, "answer")]
    assert not ModelResponse.objects.exists()


def test_the_api_refuses_nul_in_an_id_prefix_or_a_column_name(client, django_user_model, imported_nv):
    from rest_framework.authtoken.models import Token

    user = django_user_model.objects.create_superuser("admin", password="pw")
    auth = {"HTTP_AUTHORIZATION": f"Token {Token.objects.create(user=user).key}"}
    upload = io.BytesIO(b"likely\n50\n")
    upload.name = "wide.csv"
    answer = client.post("/api/studies/nv/import-wide/", {"file": upload, "id_prefix": "x\x00"}, **auth)
    assert answer.status_code == 400 and "id_prefix" in answer.json()
    upload = io.BytesIO(b"p,v,e\nP1,50,likely\n")
    upload.name = "long.csv"
    answer = client.post("/api/studies/nv/import-responses/",
                         {"file": upload, "participant": "p\x00", "value": "v", "expression": "e"}, **auth)
    assert answer.status_code == 400 and "participant" in answer.json()
