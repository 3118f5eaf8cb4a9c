"""Between-subjects cells: which cell a new participant is given (``[[factors]]``, ``[conditions]``).

A participant's cell is chosen when they first enter and stored on them (``Participant.condition``); a
participant who comes back keeps it. How (``[conditions] assignment``):

- ``balanced``: the least-filled open cell, ties at random. A cell's fill counts its completed participants and
  those still in progress (started, not ended) who entered less than ``in_progress_minutes`` ago (the study's
  time limit: after it, someone who has not finished no longer holds a place); test participants, those who
  returned, timed out, were screened out or declined are not counted. As psiTurk does, people in progress count,
  so that a burst of entries spreads over the cells instead of piling into the one that was emptiest.
- ``random``: any open cell, at random.
- ``link``: the cell the entry link names (``?condition=CELL``), for a channel that assigns itself; a link
  without one, or naming no cell, is refused with a page that says so.

A test participant (surveys.test_mode) may name a cell in their link whatever the mode (to see each cell).
Caps (``cap``, ``caps``): a full cell is skipped; when every cell is full the entry is refused with the study's
full page (:class:`StudyFull`) and nothing is created.

Concurrency: the choice and the participant's creation happen in one transaction that first locks the study's
row (``SELECT … FOR UPDATE``, as the item draw does), so entries of one study are chosen one after another and
each sees the cells filled by those before it (tests/test_conditions_concurrent.py: 40 entries at once on
PostgreSQL end in four cells of 10).
"""
from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any, Mapping

from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from .condition_context import cells_of
from .flow_errors import FlowError
from .models import Participant, Study

LINK_PARAM = "condition"


class StudyFull(FlowError):
    """Every cell of the study has reached its cap: no new participant is admitted."""

    status = 403


class BadCondition(FlowError):
    """The entry link names no cell, or one the study does not have (``assignment = "link"``)."""

    status = 400


def has_factors(study: Study) -> bool:
    return bool((study.definition or {}).get("factors"))


def settings_of(study: Study) -> Mapping[str, Any]:
    return (study.definition or {}).get("conditions") or {}


def caps(study: Study) -> dict[str, int | None]:
    """Each cell's cap (None: none)."""
    conditions = settings_of(study)
    own = conditions.get("caps") or {}
    return {cell: own.get(cell, conditions.get("cap")) for cell in cells_of(study.definition)}


def counting(study: Study, now: datetime | None = None) -> Q:
    """The participants who hold a place in their cell: completed, or started less than ``in_progress_minutes``
    ago and still in progress; never test participants."""
    now = now or timezone.now()
    minutes = int(settings_of(study).get("in_progress_minutes") or 60)
    return (Q(status=Participant.Status.COMPLETED)
            | Q(status=Participant.Status.STARTED, started_at__gte=now - timedelta(minutes=minutes))) & Q(is_test=False)


def fill(study: Study, now: datetime | None = None) -> dict[str, int]:
    """How many participants hold a place in each cell (:func:`counting`)."""
    counts = dict(Participant.objects.filter(counting(study, now), study=study).values("condition")
                  .annotate(n=Count("pk")).values_list("condition", "n"))
    return {cell: counts.get(cell, 0) for cell in cells_of(study.definition)}


def choose_cell(study: Study, params: Mapping[str, str], is_test: bool, rng: random.Random | None = None) -> str:
    """The cell for a new participant of ``study`` (call with the study's row locked); StudyFull or
    BadCondition refuse the entry."""
    rng = rng or random.Random()
    cells = cells_of(study.definition)
    mode = settings_of(study).get("assignment") or "balanced"
    named = (params.get(LINK_PARAM) or "").strip()
    if named or mode == "link":
        if named not in cells and (mode == "link" or is_test):
            raise BadCondition(_("This link names no condition of the study"),
                               _("The study link must name one of the study's conditions. Please open the link "
                                 "you were given again, or contact the researcher."))
        if mode == "link" or is_test:
            if is_test:
                return named
            cap = caps(study)[named]
            if cap is not None and fill(study)[named] >= cap:
                raise StudyFull(_("This study is full"),
                                _("All places in this study have been taken. Please return it; thank you for "
                                  "your interest."))
            return named
    filled = fill(study)
    limits = caps(study)
    open_cells = [c for c in cells if limits[c] is None or filled[c] < limits[c]]
    if not open_cells:
        if is_test:
            return rng.choice(cells)
        raise StudyFull(_("This study is full"),
                        _("All places in this study have been taken. Please return it; thank you for your interest."))
    if mode == "random":
        return rng.choice(open_cells)
    least = min(filled[c] for c in open_cells)
    return rng.choice([c for c in open_cells if filled[c] == least])
