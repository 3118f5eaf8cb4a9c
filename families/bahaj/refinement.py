"""Self-refinement of interval answers (Bahaj et al. §3.2.2, Table 2): what a refinement run of an
interval-at-confidence study shows, asks and reads (reached through the kind's ``Instrument.refinement``,
families/bahaj/refinement_hook.py; the mechanism, a run built on a run, is the core's: elicitation/refinement.py).

A refinement run (``ElicitationRun.refines`` = the source run, prompt style ``refine``) asks, for each item and
sample, Table 2's prompt (worded by the study's ``[prompt.styles.refine]``, else the shipped
studies/bahaj/study.toml's: ``IntervalConfidence.refinement_prompt``): the question and e answers of the source run
for the same question with their confidence levels, drawn at random —

- setting ``single``: from the source run's parsed answers to the same item (the question at the same level);
- setting ``mixed``: from its parsed answers to every level of the question (items sharing ``statement_id``);

the draw of sample k of an item is ``random.Random(f"{refine_seed}|{item.key}|{k}").sample(pool, e)``
(``elicitation.refinement.draw_rng``) over the pool ordered by item key and sample index (all of it when it holds fewer than e), so a refinement is reproduced
and resumed exactly as long as the source run's answers stay as they are (resuming the source run afterwards
can add answers to the pools). The model answers with JSON: ``chosen_answer`` (one of the shown intervals)
and ``proposed_answer`` (a new one).

What is stored: the **proposed** interval in ``lower``/``upper`` (the run's answer: status ``ok`` when it is
read, ``unparseable`` with the reason otherwise); the **chosen** interval in ``detail["chosen"]`` ([lower,
upper], or null with ``detail["chosen_error"]``). The prompt itself is stored with its hash like any prompt.
Both are scored by the report (families/bahaj/report.py) at the item's level.

**The authors' refinement** (prompt style ``authors-refine``, the one a refinement takes (``elicitation.refinement.create_refinement``) when the
source run used one of the authors' prompt styles; their notebooks, §5 of ../shared/data/bahaj2024-protocol):

- candidates are the source run's **raw replies** (every answered row, read or not) of the same hint condition,
  each flattened with "|" and tagged with its level, in the authors' single- or mixed-confidence template
  (families/bahaj/authors.py, studies/bahaj/templates.toml); single: drawn **with replacement** from the item's
  tries; mixed: **without replacement** from every level's tries of the question, one prompt per question (and
  hint condition), asked on its first item;
- no temperature is sent (the provider's default);
- the reply is read as a Python literal (``ast.literal_eval``, never ``eval``); a reply that is none is asked
  again, :data:`families.bahaj.authors.REFINE_ATTEMPTS` asks in all, then the row is kept as unparseable with
  ``detail["asks"]`` and the reasons (the authors skipped it; the report counts it and leaves it out of the
  refinement scores). ``detail["chosen"]`` and ``detail["proposed"]`` hold the two intervals as the authors'
  scoring reads them (reversed bounds kept; None for a bound that is no number); ``lower``/``upper`` hold the
  proposed one when it is a well-ordered interval.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from elicitation.modes import complete
from elicitation.outcomes import Completion, Outcome
from elicitation.refinement import draw_rng, source_rows
from families.bahaj import authors as bahaj
from surveys.instruments import Instrument, Prompt
from families.bahaj.instrument import AUTHORS_REFINE
from surveys.instruments.interval_text import IntervalReading, read_interval
from surveys.models import Item

Shown = tuple[int, float, float, int]  # (model response id, lower, upper, confidence)


def pool(run: ElicitationRun, item: Item) -> list[Shown]:
    """The source run's parsed answers the draw for ``item`` picks from (see the module docstring)."""
    rows = source_rows(run, item, [ModelResponse.Status.OK]).filter(lower__isnull=False, upper__isnull=False)
    return [(pk, lower, upper, int((extra or {}).get("confidence", 0)))
            for pk, lower, upper, extra in rows.values_list("pk", "lower", "upper", "item__extra")]


def hint_of(extra: dict | None) -> str:
    return str((extra or {}).get("hint") or bahaj.NO_HINT)


def raw_pool(run: ElicitationRun, item: Item) -> list[tuple[int, str, int]]:
    """The authors' pool: (response id, raw reply, level) of every answered row of the source run for the item
    (single) or for every level of its question (mixed), in the item's hint condition."""
    rows = source_rows(run, item, [ModelResponse.Status.OK, ModelResponse.Status.UNPARSEABLE])
    hint = hint_of(item.extra)
    return [(pk, raw, int((extra or {}).get("confidence", 0)))
            for pk, raw, extra in rows.values_list("pk", "raw_output", "item__extra")
            if hint_of(extra) == hint]


def authors_draw(run: ElicitationRun, item: Item, sample_index: int) -> list[tuple[int, str, int]]:
    """The candidates of (item, sample) in an authors' refinement, reproducible from the run's draw seed."""
    rng = draw_rng(run, item, sample_index)
    return bahaj.draw_candidates(raw_pool(run, item), int(run.refine_shown or 0), run.refine_setting, rng)


def draw(run: ElicitationRun, item: Item, sample_index: int) -> list[Shown]:
    """The e answers shown in the prompt of (item, sample), reproducible from the run's draw seed."""
    answers = pool(run, item)
    rng = draw_rng(run, item, sample_index)
    return rng.sample(answers, min(int(run.refine_shown or 0), len(answers)))


def refinement_prompt(run: ElicitationRun, item: Item, sample_index: int) -> Prompt:
    """The prompt of one (item, sample) of a refinement run (ValueError when the source has nothing to show)."""
    if run.prompt_style == AUTHORS_REFINE:
        candidates = authors_draw(run, item, sample_index)
        if not candidates:
            raise ValueError(f"run {run.refines_id} has no reply to show for item {item.key}")
        text = bahaj.refinement_prompt(run.study.kind.authors_question(item), [(raw, c) for _, raw, c in candidates], run.refine_setting)
        return Prompt(text=text, messages=[{"role": "user", "content": text}],
                      record={"shown": [pk for pk, _, _ in candidates]})
    shown = draw(run, item, sample_index)
    if not shown:
        raise ValueError(f"run {run.refines_id} has no parsed answer to show for item {item.key}")
    return run.study.kind.refinement_prompt(item, [(lower, upper, c) for _, lower, upper, c in shown])


def _field(raw: str, key: str) -> IntervalReading:
    match = re.search(rf'{key}"?\s*[:=]\s*"?(\[[^\]]*\])', raw or "", re.IGNORECASE)
    if match is None:
        return IntervalReading(error=f"no {key} in the answer")
    return read_interval(match.group(1))


def read_refinement(raw: str) -> tuple[IntervalReading, IntervalReading]:
    """(chosen, proposed) intervals read from a refinement answer (each with its reason when unreadable)."""
    return _field(raw, "chosen_answer"), _field(raw, "proposed_answer")


@dataclass
class Asked:
    """An authors' refinement answer: the last reply, how many asks it took and why the earlier ones failed."""

    completion: Completion
    asks: int
    errors: list[str]
    reply: dict[str, Any] | None


def ask(run: ElicitationRun, client: Any, endpoint: ModelEndpoint, content: Any, params: dict[str, Any]) -> Any:
    """One refinement answer: one request, or for the authors' refinement up to
    :data:`~families.bahaj.authors.REFINE_ATTEMPTS` until the reply is a Python literal (their ``process_``)."""
    if run.prompt_style != AUTHORS_REFINE:
        return complete(client, endpoint, content, params)
    errors: list[str] = []
    prompt_tokens = completion_tokens = 0
    for n in range(1, bahaj.REFINE_ATTEMPTS + 1):
        completion = complete(client, endpoint, content, params)
        prompt_tokens += completion.prompt_tokens or 0
        completion_tokens += completion.completion_tokens or 0
        try:
            reply = bahaj.literal_reply(completion.text)
        except ValueError as exc:
            errors.append(str(exc))
            reply = None
        if reply is not None or n == bahaj.REFINE_ATTEMPTS:
            summed = Completion(completion.text, None, prompt_tokens if completion.prompt_tokens is not None else None,
                                completion_tokens if completion.completion_tokens is not None else None,
                                completion.system_fingerprint, completion.finish_reason)
            return Asked(summed, n, errors, reply)
    raise AssertionError("unreachable")  # pragma: no cover


def authors_outcome(asked: Asked) -> Outcome:
    """The authors' refinement answer (module docstring)."""
    completion = asked.completion
    detail: dict[str, Any] = {"finish_reason": completion.finish_reason, "asks": asked.asks}
    if asked.errors:
        detail["ask_errors"] = asked.errors
    base = dict(raw_output=completion.text, prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens, system_fingerprint=completion.system_fingerprint,
                requests=asked.asks)
    unparseable = ModelResponse.Status.UNPARSEABLE
    if asked.reply is None:
        return Outcome(status=unparseable, detail=detail, **base,
                       parse_error=f"no Python literal in {asked.asks} asks: {asked.errors[-1]}"[:300])
    intervals = bahaj.refinement_intervals(asked.reply)
    if intervals is None:
        return Outcome(status=unparseable, detail=detail, **base,
                       parse_error="chosen_answer and proposed_answer are not both lists of two bounds")
    (c_lo, c_hi), (p_lo, p_hi) = intervals
    detail.update(chosen=[c_lo, c_hi], proposed=[p_lo, p_hi])
    if p_lo is None or p_hi is None:
        return Outcome(status=unparseable, detail=detail, parse_error="proposed: a bound is not a number", **base)
    if p_lo > p_hi:
        return Outcome(status=unparseable, detail=detail, **base,
                       parse_error=f"proposed: reversed interval: lower bound {p_lo:g} > upper bound {p_hi:g}")
    return Outcome(status=ModelResponse.Status.OK, lower=p_lo, upper=p_hi, detail=detail, **base)


def refinement_outcome(kind: Instrument, completion: Completion | Asked) -> Outcome:
    """The proposed interval as the answer, the chosen one in ``detail`` (module docstring)."""
    if isinstance(completion, Asked):
        return authors_outcome(completion)
    chosen, proposed = read_refinement(completion.text)
    detail: dict[str, Any] = {"finish_reason": completion.finish_reason,
                              "chosen": [chosen.lower, chosen.upper] if chosen.ok else None}
    if not chosen.ok:
        detail["chosen_error"] = chosen.error
    base = dict(raw_output=completion.text, prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens, system_fingerprint=completion.system_fingerprint,
                detail=detail)
    if not proposed.ok:
        return Outcome(status=ModelResponse.Status.UNPARSEABLE, parse_error=f"proposed: {proposed.error}"[:300],
                       **base)
    return Outcome(status=ModelResponse.Status.OK, lower=proposed.lower, upper=proposed.upper, **base)


def refinable_items(source: ElicitationRun, setting: str, authors: bool = False) -> list[Item]:
    """The items a refinement of ``source`` asks: those with a parsed answer (single), or every item of the
    source's items whose question has one (mixed); for the authors' refinement, a reply read or not counts, and
    mixed asks once per question and hint condition (its first item: the level plays no part), as they did."""
    rows = ModelResponse.objects.filter(run=source)
    if authors:
        rows = rows.filter(status__in=[ModelResponse.Status.OK, ModelResponse.Status.UNPARSEABLE])
    else:
        rows = rows.filter(status=ModelResponse.Status.OK, lower__isnull=False)
    answered = set(rows.values_list("item_id", flat=True))
    items = list(source.target_items().order_by("id"))
    if setting == "mixed":
        questions = {i.statement_id for i in items if i.pk in answered}
        if authors:
            firsts: dict[tuple[str, str], Item] = {}
            for i in items:
                if i.statement_id in questions:
                    firsts.setdefault((i.statement_id, hint_of(i.extra)), i)
            return list(firsts.values())
        return [i for i in items if i.statement_id in questions]
    return [i for i in items if i.pk in answered]
