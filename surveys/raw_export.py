"""The raw human responses of a study as CSV, one row per response, streamed (never all in memory)."""
from __future__ import annotations

import csv
from typing import Iterable, Iterator

from django.http import StreamingHttpResponse

from .channels import channel_name
from .models import Response, Study
from .questions import several
from .spreadsheet import safe_cell

COLUMNS: tuple[str, ...] = (
    "study", "prolific_pid", "participant_status", "position", "item_key", "label", "expression",
    "statement_id", "statement_type", "truth", "is_control", "speaker_shown", "speaker_gender_shown",
    "sentence_shown", "value", "choice", "lower", "upper", "time_taken_ms", "client_time_ms", "answered_at",
    "imported", "test",  # test: a test participant (surveys.test_mode): not in reports or the combined export
    "channel",  # how they came in (surveys.channels): "prolific" or a recruitment channel's name
    "text",  # a free-text answer, exactly as written
    "option_order",  # a randomised choice: the option keys in the order this participant saw them ("B|A|C")
)
#: A study with ``[[questions]]`` adds the key of the question each response answers (surveys/questions.py).
QUESTION_COLUMN = "question"
CHUNK_SIZE = 2000


def columns_of(study: Study) -> tuple[str, ...]:
    """The raw export's columns for ``study``: :data:`COLUMNS`, plus ``question`` with ``[[questions]]``."""
    return COLUMNS + ((QUESTION_COLUMN,) if several(study) else ())


def _number(value: float | int | None) -> str:
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, float) else str(value)


def raw_rows(study: Study) -> Iterator[list[str]]:
    """One list of cells (in :func:`columns_of` order) per response of ``study``, by participant and position
    (and question)."""
    kind = study.kind
    with_question = several(study)
    responses = (
        Response.objects.filter(participant__study=study)
        .select_related("participant__channel", "item", "assignment")
        .order_by("participant__started_at", "participant_id", "assignment__position", "pk")
    )
    for response in responses.iterator(chunk_size=CHUNK_SIZE):
        item, slot, participant = response.item, response.assignment, response.participant
        item.study = study  # the instrument needs it; avoid one query per row
        speaker = slot.speaker() or (item.speaker_name, item.speaker_gender)
        yield [
            study.slug,
            participant.prolific_pid,
            participant.status,
            str(slot.position),
            item.key,
            item.label,
            item.expression,
            item.statement_id,
            item.statement_type,
            item.truth,
            "true" if item.is_control else "false",
            speaker[0],
            speaker[1],
            kind.sentence(item, slot.speaker()),
            _number(response.value),
            response.choice,
            _number(response.lower),
            _number(response.upper),
            _number(response.time_taken_ms),
            _number(response.client_time_ms),
            response.created_at.isoformat(),
            "true" if response.imported else "false",
            "true" if participant.is_test else "false",
            channel_name(participant),
            response.text,
            "|".join(slot.option_order or []),
        ] + ([response.question] if with_question else [])


class _Echo:
    """A write-only file object whose write() returns what it was given (for streaming csv.writer)."""

    def write(self, value: str) -> str:
        return value


def csv_lines(rows: Iterable[list[str]], header: Iterable[str] = COLUMNS) -> Iterator[str]:
    """CSV text, one line at a time: the header, then each row (text that a spreadsheet would run as a
    formula is escaped, surveys.spreadsheet)."""
    writer = csv.writer(_Echo())
    yield writer.writerow(list(header))
    for row in rows:
        yield writer.writerow([safe_cell(cell) for cell in row])


def raw_responses_response(study: Study) -> StreamingHttpResponse:
    """An HTTP download of ``study``'s raw responses (``<slug>-raw-responses.csv``)."""
    response = StreamingHttpResponse(csv_lines(raw_rows(study), columns_of(study)),
                                     content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-raw-responses.csv"'
    response["Cache-Control"] = "no-store"
    return response
