"""Self-refinement: a run built on a run.

A refinement run (``ElicitationRun.refines`` = the source run) asks, for each item and sample, a prompt that
shows ``refine_shown`` answers of the source run for the same question, drawn at random, and asks the model for
a better answer. The mechanism is the core's:

- the run's fields (``refines``, ``refine_shown``, ``refine_setting``, ``refine_seed``) and their checks
  (``run_settings.refinement_errors``);
- which rows of the source run a draw may pick from (:func:`source_rows`): setting ``single``, the answers to the
  same item; ``mixed``, the answers to every item of its question (items sharing ``statement_id``); ordered by
  item key and sample index;
- the draw's seed (:func:`draw_rng`): sample k of an item draws with ``random.Random(f"{refine_seed}|{item.key}|{k}")``,
  so a refinement is reproduced and resumed exactly as long as the source run's answers stay as they are;
- creating one (:func:`create_refinement`; ``refine_request``: the admin, the API and ``manage.py refine``), the
  refusals, and the worker asking its prompts (:func:`prompt`, :func:`ask`, :func:`outcome`).

What a refinement shows, how it is worded, asked and read, and which answers can be refined belong to the item
kind: its instrument's ``refinement`` hook (``Instrument.refinement``: a :class:`Refinement`, or a
``"module:attribute"`` naming one; None: the kind's answers cannot be refined), contributed by the family that
contributes the kind (config/registry.py).
"""
from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Mapping

from django.db import transaction

from .models import ElicitationRun, ModelEndpoint, ModelResponse
from .modes import complete
from .outcomes import Outcome
from .prompt_versions import version_prefix
from .run_settings import REFINE_STYLE, refine_style

if TYPE_CHECKING:  # pragma: no cover
    from django.db.models import QuerySet

    from surveys.instruments import Instrument, Prompt
    from surveys.models import Item


class Refinement:
    """An item kind's self-refinement (``Instrument.refinement``): what its runs show, ask and read.

    A family subclasses it for a kind whose answers can be refined; the core calls nothing else of it."""

    #: the prompt styles of the kind's refinement runs (each must be one of the kind's prompt styles)
    styles: tuple[str, ...] = (REFINE_STYLE,)

    def style(self, source: ElicitationRun) -> str:
        """The prompt style of a refinement of ``source``."""
        return REFINE_STYLE

    def refinable_items(self, source: ElicitationRun, setting: str, style: str) -> list[Item]:
        """The items a refinement of ``source`` asks (none: nothing to refine yet, :meth:`nothing_to_refine`)."""
        raise NotImplementedError

    def nothing_to_refine(self, source: ElicitationRun) -> str:
        """Why a refinement of ``source`` has no item to ask."""
        return f"run {source.pk} has no parsed answer to refine"

    def prompt(self, run: ElicitationRun, item: Item, sample_index: int) -> Prompt:
        """The prompt of one (item, sample) of ``run`` (ValueError when the source has nothing to show)."""
        raise NotImplementedError

    def ask(self, run: ElicitationRun, client: Any, endpoint: ModelEndpoint, content: Any,
            params: dict[str, Any]) -> Any:
        """One answer: by default one request (what :meth:`outcome` reads)."""
        return complete(client, endpoint, content, params)

    def outcome(self, kind: Instrument, answer: Any) -> Outcome:
        """The stored answer read from what :meth:`ask` returned."""
        raise NotImplementedError

    # answers made elsewhere (import_model_answers --refines, analysis/model_answer_import.py)

    #: the columns a file's row may hold the reply in (all of them), instead of the reply's text
    reply_columns: tuple[str, ...] = ()

    def composed_reply(self, row: Mapping[str, str]) -> str:
        """The reply rebuilt from a row's :attr:`reply_columns`."""
        raise NotImplementedError

    def is_record(self, row: Mapping[str, str]) -> bool:
        """Whether a row is a record that names its item by itself (:meth:`record_item`), without item columns."""
        return False

    def record_item(self, items: list[Item], row: Mapping[str, str], setting: str) -> Item:
        """The item a record (:meth:`is_record`) refines; ``items``: the study's main items in id order."""
        raise NotImplementedError

    def imported_outcome(self, kind: Instrument, raw: str, style: str) -> Outcome:
        """One refinement answer made elsewhere, read as a live one of prompt style ``style``."""
        raise NotImplementedError


def hook(kind: Instrument) -> Refinement:
    """``kind``'s refinement (ValueError when its answers cannot be refined)."""
    found = kind.refinement_hook()
    if found is None:
        raise ValueError(f"{kind.name} answers cannot be refined")
    return found


def source_rows(run: ElicitationRun, item: Item, statuses: list[str]) -> QuerySet[ModelResponse]:
    """The source run's answers of ``statuses`` a draw for ``item`` picks from (module docstring)."""
    rows = ModelResponse.objects.filter(run_id=run.refines_id, status__in=statuses)
    if run.refine_setting == "mixed":
        rows = rows.filter(item__study_id=item.study_id, item__statement_id=item.statement_id)
    else:
        rows = rows.filter(item=item)
    return rows.order_by("item__key", "sample_index")


def draw_rng(run: ElicitationRun, item: Item, sample_index: int) -> random.Random:
    """The random numbers of the draw of (item, sample), from the run's draw seed."""
    return random.Random(f"{run.refine_seed}|{item.key}|{sample_index}")


def prompt(run: ElicitationRun, item: Item, sample_index: int) -> Prompt:
    """The prompt of one (item, sample) of a refinement run (ValueError when the source has nothing to show)."""
    return hook(run.study.kind).prompt(run, item, sample_index)


def ask(run: ElicitationRun, kind: Instrument, client: Any, endpoint: ModelEndpoint, content: Any,
        params: dict[str, Any]) -> Any:
    """One refinement answer, asked as ``kind``'s refinement asks it."""
    return hook(kind).ask(run, client, endpoint, content, params)


def outcome(kind: Instrument, answer: Any) -> Outcome:
    """The stored refinement answer read from what :func:`ask` returned."""
    return hook(kind).outcome(kind, answer)


def create_refinement(source: ElicitationRun, endpoint: ModelEndpoint, *, shown: int = 3, setting: str = "single",
                      draw_seed: int = 0, mode: str = ElicitationRun.Mode.GREEDY, samples: int = 1,
                      temperature: float = 0.0, seed: int | None = None, max_tokens: int = 256, name: str = "",
                      created_by: Any = None) -> ElicitationRun:
    """A draft self-refinement run of ``source`` (ValidationError names bad settings). A prompt style that sends
    no temperature (the provider's default) ignores ``temperature``."""
    from django.core.exceptions import ValidationError

    style = refine_style(source)
    if not source.study.kind.sends_temperature(style):
        temperature = 0.0  # not sent: the provider's default
    run = ElicitationRun(study=source.study, endpoint=endpoint, mode=mode, samples_per_item=samples,
                         temperature=temperature, seed=seed, few_shot=False, max_tokens=max_tokens, name=name,
                         prompt_style=style, prompt_version=f"{version_prefix(source.study)}-{style}-v1",
                         refines=source, refine_shown=shown, refine_setting=setting, refine_seed=draw_seed,
                         created_by=created_by)
    run.full_clean()
    items = hook(source.study.kind).refinable_items(source, setting, style)
    if not items:
        raise ValidationError({"refines": hook(source.study.kind).nothing_to_refine(source)})
    with transaction.atomic():
        run.save()
        run.items.set(items)
    return run
