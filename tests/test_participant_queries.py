"""The participant path's database work (issue 10): an answer is one request — the POST, whose reply is the
next question's page — in at most 6 SQL statements: the session, the participant with its study, the current
slot with its item and counts, and one transaction with the insert, the next slot and the time it was first
shown; no session write when nothing in it changed. Main issued 21 before (17 without transaction control)
for the POST and the page it redirected to.

Transaction control is counted apart: in a test the request's transaction is a SAVEPOINT inside the test's
own transaction (in production: BEGIN … COMMIT); the answer POST is one transaction, a reload none."""
from __future__ import annotations

import re

from django.db import connection
from django.test.utils import CaptureQueriesContext

from surveys.models import Participant, Response
from test_flow import answer, current_slot, start, study, url  # noqa: F401  (study is a fixture)

MAX_QUERIES = 6
CONTROL = re.compile(r"^\s*(SAVEPOINT|RELEASE SAVEPOINT|ROLLBACK TO SAVEPOINT|BEGIN|COMMIT)\b", re.I)


def _split(queries: CaptureQueriesContext) -> tuple[list[str], list[str]]:
    sql = [q["sql"] for q in queries.captured_queries]
    return [q for q in sql if not CONTROL.match(q)], [q for q in sql if CONTROL.match(q)]


def _show(sql: list[str]) -> str:
    return "\n".join(q[:160] for q in sql)


def test_an_answer_with_the_next_page_takes_at_most_six_queries(client, study):
    participant = start(client, study)
    client.get(url(study, "item"))
    for n in range(3):
        slot = current_slot(participant)
        with CaptureQueriesContext(connection) as queries:
            page = answer(client, study, slot, 50)  # the reply is the next question's page
            assert page.status_code == 200 and f"Question {n + 2} of 30" in page.content.decode()
        data, control = _split(queries)
        assert len(data) <= MAX_QUERIES, f"answer {n + 1}: {len(data)} queries:\n{_show(data)}"
        assert sum(q.upper().startswith("SAVEPOINT") for q in control) == 1, _show(control)
        assert not [q for q in data if "django_session" in q and not q.startswith("SELECT")], "session written"
    assert Response.objects.filter(participant=participant).count() == 3


def test_a_reload_reads_and_writes_nothing_more(client, study):
    start(client, study)
    client.get(url(study, "item"))  # first shown: the time is recorded
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url(study, "item")).status_code == 200
    data, control = _split(queries)
    assert len(data) == 3 and all(q.startswith("SELECT") for q in data), _show(data)
    assert not control


def test_the_last_answer_completes_within_a_few_more(client, study):
    participant = start(client, study)
    for _ in range(29):
        slot = current_slot(participant)
        answer(client, study, slot, 50)
    slot = current_slot(participant)
    with CaptureQueriesContext(connection) as queries:
        posted = answer(client, study, slot, 50)
    assert posted["Location"] == url(study, "done")
    data, _control = _split(queries)
    # + the answers for the live attention check, the participant's completion, the session's redirect flag
    assert len(data) <= 4 + 3, _show(data)
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED and participant.responses.count() == 30
