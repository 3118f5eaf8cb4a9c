"""Balanced assignment to cells holds when participants enter at once (issue 31, point 1): 40 entries in 40
threads on PostgreSQL end in four cells of 10 ± 1 among those who complete. Each entry chooses its cell and
creates its participant under the study row's lock (surveys/conditions.py); without the lock the threads read the
same empty cells and pile into them. SQLite's in-memory test database cannot take concurrent writers, so this
runs only with DATABASE_URL=postgres://… (CI does), as the other concurrency tests."""
from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from surveys import flow
from surveys.definition.loader import files_beside, load
from surveys.models import Participant, Study

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLE = Path(__file__).resolve().parent.parent / "studies" / "examples" / "hedged-advice" / "study.toml"
PEOPLE = 40


def test_forty_participants_entering_at_once_fill_four_cells_evenly():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's in-memory test database reports 'table is locked' instead of waiting; "
                    "run with DATABASE_URL=postgres://... (CI does)")
    study = load(EXAMPLE.read_bytes(), str(EXAMPLE), files_beside(EXAMPLE)).study
    Study.objects.filter(pk=study.pk).update(status=Study.Status.LIVE)
    study.refresh_from_db()
    barrier = threading.Barrier(PEOPLE)
    cells: list[str] = []
    errors: list[str] = []

    def arrive(n: int) -> None:
        try:
            mine = Study.objects.get(pk=study.pk)
            barrier.wait()
            cells.append(flow.enter(mine, {"PROLIFIC_PID": f"CONCURRENT{n:04d}"}).condition)
        except Exception as exc:  # reported below, with the thread's number
            errors.append(f"{n}: {exc!r}")
        finally:
            connection.close()

    threads = [threading.Thread(target=arrive, args=(n,)) for n in range(PEOPLE)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(cells) == PEOPLE == Participant.objects.filter(study=study).count()
    Participant.objects.filter(study=study).update(status=Participant.Status.COMPLETED, completed_at=timezone.now())
    completed = Counter(Participant.objects.filter(study=study, status=Participant.Status.COMPLETED)
                        .values_list("condition", flat=True))
    assert sorted(completed) == ["doctor-gain", "doctor-loss", "friend-gain", "friend-loss"]
    assert all(9 <= n <= 11 for n in completed.values()), completed
