"""Interval at confidence (Bahaj et al., overprecision): a numeric question and an imposed confidence level
c ∈ {60, 70, 80, 90, 95} % → a lower and an upper bound.

An item is one question at one level: ``statement`` holds the question, ``ground_truth`` its numeric answer,
``extra["confidence"]`` the level c, ``extra["source"]`` the source dataset, ``extra["question"]`` the question
verbatim when its whitespace differs from the statement's (the authors' styles send it); a question's five items
share ``statement_id``; the item key is ``<statement_id>|<c>``. ``import_items`` expands each CSV row (question,
answer, source; optional id) into the five items.

This module is the family's logic; the platform's wording (the page's question and hints, the prompts of the
styles standard, cot, hint and cot_hint, the task description) is in the shipped definition
studies/bahaj/study.toml, or in a study's own definition. The logic: the level and tail (100 − c)/2 templates see
(:meth:`IntervalConfidence.template_context`), the prompt styles and their assembly (one user message, no
demonstrations: the paper's prompts are zero-shot), the misleading hint of the hint styles (:func:`hint_interval`),
the authors' styles, the interval reading, the report's named ``reading``, the item import (five items per row)
and keys. Prompt styles:
- ``standard``, ``cot``, ``hint``, ``cot_hint`` — the paper's Table 1 / Appendix A prompts ([prompt] and
  [prompt.styles.*] of the definition). The hinted interval is drawn around the true answer (as in the paper,
  App. B), seeded by the item's key so a prompt never changes;
- ``refine`` — reserved for self-refinement runs (elicitation/refinement.py, Table 2's prompt), which need a
  source run;
- ``authors-vanilla`` and ``authors-cot`` — the authors' prompts word for word (their notebooks, not the paper's
  prose; families/bahaj/authors.py and studies/bahaj/templates.toml): the hint condition is the item's
  (``extra["hint"]``: hint0 — the default —, hint1, hint3 or hint8; the ``bahaj-hints`` design adds the hinted
  items), the hint bounds are drawn the authors' way for every try from a generator seeded by the run's seed,
  the item and the sample, and stored with the answer (``detail["hint"]``); no temperature is sent (the
  provider's default, as the authors ran it). ``authors-refine`` is the authors' self-refinement.

Participants see the question, the level in words and two number fields (decimals and negatives allowed;
lower ≤ upper checked on the page and again on the server). A model's answer is read by
:mod:`surveys.instruments.interval_text`; a reversed interval or a single number is unparseable, with the reason.
Scoring: metrics/overprecision.py (hit@c, Pearson r, DS, ILS) and metrics/aggregation.py.
"""
from __future__ import annotations

import hashlib
import random
import zlib
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from surveys.definition import wording as definition_wording
from surveys.definition.files import shipped_definition
from surveys.instruments.base import ImportRowError, Instrument, Prompt, Speaker
from surveys.instruments.interval_text import plain, read_interval, to_number
from surveys.instruments.shapes import Answer, IntervalShape, ParsedAnswer

from families.bahaj import authors as bahaj

if TYPE_CHECKING:  # pragma: no cover
    from surveys.models import Item

LEVELS: tuple[int, ...] = (60, 70, 80, 90, 95)
AUTHORS_STYLES: dict[str, str] = {"authors-vanilla": "vanilla", "authors-cot": "cot"}  # style → the authors' strategy
AUTHORS_REFINE = "authors-refine"
STYLES: tuple[str, ...] = ("standard", "cot", "hint", "cot_hint", "refine", *AUTHORS_STYLES, AUTHORS_REFINE)


def read_answer(raw: str, reading: str) -> bahaj.AuthorsReading:
    """A generation answer under ``reading`` (the report option above): ``authors`` — the authors' cleaner
    (:func:`families.bahaj.authors.authors_bounds`: missing bounds, reversed bounds and point intervals kept as
    they are); ``text`` — the platform's ``read_interval`` (both bounds or neither: a reversed interval or a single
    number is unread, its reason in ``cases``)."""
    if reading == "authors":
        return bahaj.authors_bounds(raw)
    if reading != "text":
        raise ValueError(f"unknown reading {reading!r} (known: {', '.join(bahaj.READINGS)})")
    found = read_interval(raw)
    if not found.ok:
        return bahaj.AuthorsReading(None, None, {}, (found.error,))
    return bahaj.AuthorsReading(found.lower, found.upper)


class SourceRunNeeded(ValueError, NotImplementedError):
    """A prompt style built from a source run's answers (a self-refinement), not from the item alone: it has no
    prompt of its own (a NotImplementedError too, so a definition check that renders every style passes it by)."""


def tail(c: float) -> str:
    """The probability below the lower (and above the upper) bound of a c % interval, in percent."""
    return f"{(100 - c) / 2:g}"


def hint_interval(item: "Item") -> tuple[float, float]:
    """A misleading hint around the true answer a: centre a·(1 + u), u ~ U(−0.5, 0.5), half-width
    |a|·U(0.05, 0.3) (1 when a = 0), rounded to 3 significant digits; seeded by the item's key."""
    rng = random.Random(zlib.crc32(item.key.encode("utf-8")))
    a = float(item.ground_truth or 0)
    centre = a * (1 + rng.uniform(-0.5, 0.5))
    half = abs(a) * rng.uniform(0.05, 0.3) or 1.0
    return float(f"{centre - half:.3g}"), float(f"{centre + half:.3g}")


class IntervalConfidence(Instrument):
    name = "interval_confidence"
    label = "Interval at confidence (Bahaj et al.)"
    template_name = "surveys/items/interval_confidence.html"
    shape = IntervalShape()
    prompt_styles = STYLES
    report_sections = ("bahaj",)
    prompt_version_prefix = "bahaj"
    refinement = "families.bahaj.refinement_hook:REFINEMENT"  # self-refinement (Table 2; the authors' refinement)
    attention_filter_default = False
    import_columns = ("question", "answer")
    optional_columns = ("id", "source")
    default_items_per_participant = 10
    items_per_participant_reason = ("the overprecision demo's: 10 questions at one confidence level each, "
                                    "about 10 minutes of ranges")
    template_rows = (
        {"question": "At what temperature, in degrees Celsius, does pure water boil at sea level?", "answer": "100",
         "id": "boil-c", "source": "science"},
        {"question": "In what year did the first person walk on the Moon?", "answer": "1969", "id": "moon",
         "source": "history"},
    )
    default_definition = "bahaj/study.toml"

    # --- wording (studies/bahaj/study.toml) ------------------------------------------------------------------
    def confidence(self, item: "Item") -> int:
        return int((item.extra or {}).get("confidence", 90))

    def template_context(self, item: "Item", speaker: Speaker | None = None) -> dict[str, Any]:
        """The item's fields and what the templates compute from: ``confidence`` (the level c, 90 when the item
        has none), ``tail`` ((100 − c)/2 as written, :func:`tail`), ``hint_lower``/``hint_upper`` (the hint
        styles' misleading interval, :func:`hint_interval`, written without exponent) and ``shown`` (the answers
        a refinement prompt shows: none here, :meth:`refinement_prompt` gives them)."""
        context = super().template_context(item, speaker)
        c = self.confidence(item)
        lower, upper = hint_interval(item)
        return context | {"confidence": c, "tail": tail(c), "hint_lower": plain(lower), "hint_upper": plain(upper),
                          "shown": []}

    def refinement_prompt(self, item: "Item", shown: Sequence[tuple[float, float, int]]) -> Prompt:
        """The ``refine`` style's prompt for ``item`` showing the answers ``shown`` ((lower, upper, level) each,
        written without exponent): the study's ``[prompt.styles.refine]`` templates, else the shipped
        definition's (a study's own definition need not word the refinement)."""
        wording = self.wording(item.study)
        if "refine" not in ((wording.get("prompt") or {}).get("styles") or {}):
            wording = {**shipped_definition(self.default_definition), "wording": wording.get("wording") or {}}
        context = self.template_context(item) | {"shown": [
            {"lower": plain(lower), "upper": plain(upper), "confidence": int(c)} for lower, upper, c in shown]}
        text, messages, _ = definition_wording.assemble_prompt(wording, "refine", context, [])
        return Prompt(text=text, messages=messages)

    def intro(self, language: str = "en") -> dict[str, Any]:
        """The task description of the instructions page: the shipped definition's ``task_intro``."""
        named = self.wording(None).get("wording") or {}
        return {"task": named.get("task_intro", ""), "scale_ends": list(named.get("scale_ends") or [])}

    def page_context(self, item: "Item", speaker: Speaker | None = None) -> dict[str, Any]:
        return super().page_context(item, speaker) | {"confidence": self.confidence(item)}

    def build_prompt(self, item: "Item", demonstrations: list["Item"], few_shot: bool = True,
                     style: str = "standard") -> Prompt:
        """One user message, no demonstrations (the paper's prompts are zero-shot): the definition's templates of
        ``style``, or the authors' prompt (:meth:`prompt_for_sample`)."""
        return self.prompt_for_sample(item, demonstrations, few_shot, style)

    def prompt_for_sample(self, item: "Item", demonstrations: list["Item"], few_shot: bool, style: str,
                          sample_index: int = 0, seed: int | None = None) -> Prompt:
        """The prompt of one try; the authors' styles draw the item's hint for each (module docstring)."""
        if style not in self.prompt_styles:
            raise ValueError(f"unknown prompt style {style!r} for {self.name} (known: {', '.join(self.prompt_styles)})")
        if style in ("refine", AUTHORS_REFINE):
            raise SourceRunNeeded(f"the {style} prompt style needs a source run (a self-refinement run)")
        if style in AUTHORS_STYLES:
            return self.authors_prompt(item, AUTHORS_STYLES[style], sample_index, seed)
        return super().build_prompt(item, [], False, style)

    def hint_condition(self, item: "Item") -> str:
        """The item's hint condition (Bahaj et al.'s hint0, hint1, hint3, hint8; hint0 when it has none)."""
        return str((item.extra or {}).get("hint") or bahaj.NO_HINT)

    def authors_prompt(self, item: "Item", strategy: str, sample_index: int = 0, seed: int | None = None) -> Prompt:
        """The authors' prompt (one user message, no system message) with the hint drawn for this try."""
        rng = bahaj.hint_rng(seed, item.key, sample_index)
        hint = bahaj.draw_hint(self.hint_condition(item), float(item.ground_truth or 0), rng)
        text = bahaj.generation_prompt(self.authors_question(item), self.confidence(item), strategy, hint)
        return Prompt(text=text, messages=[{"role": "user", "content": text}], record={"hint": hint.record()})

    def authors_question(self, item: "Item") -> str:
        """The question as the authors' prompts send it: verbatim as imported (``extra["question"]``, kept when
        its spacing differs from the statement's), else the statement."""
        return str((item.extra or {}).get("question") or item.statement)

    def sends_temperature(self, style: str) -> bool:
        """The authors' styles send none (their notebooks left the provider's default)."""
        return style not in AUTHORS_STYLES and style != AUTHORS_REFINE

    # --- answers -------------------------------------------------------------------
    def parse_interval(self, raw: str) -> ParsedAnswer:
        reading = read_interval(raw)
        if not reading.ok:
            return ParsedAnswer(raw=raw, error=reading.error)
        return ParsedAnswer(raw=raw, answer=Answer(lower=reading.lower, upper=reading.upper))

    # --- import --------------------------------------------------------------------
    def items_from_row(self, row: Mapping[str, str]) -> list[dict[str, Any]]:
        """One item per confidence level (see :meth:`item_fields_from_row`)."""
        base = self.item_fields_from_row(row)
        return [{**base, "extra": {**base["extra"], "confidence": c}} for c in LEVELS]

    def item_fields_from_row(self, row: Mapping[str, str]) -> dict[str, Any]:
        """Columns: question, answer (a number; thousands separators allowed), optional source and id. The
        statement is the question with its whitespace collapsed (pages, the platform's prompts, the id hash); a
        question whose spacing differs is also kept verbatim in ``extra["question"]`` for the authors' prompt
        styles, which send it as stored (their printed MMLU record has double spaces)."""
        verbatim = row.get("question") or ""
        question = " ".join(verbatim.split())
        if not question:
            raise ImportRowError("question", "is empty")
        answer_text = (row.get("answer") or "").strip()
        if not answer_text:
            raise ImportRowError("answer", "is empty")
        try:
            answer = to_number(answer_text)
        except ValueError:
            raise ImportRowError("answer", f"{answer_text!r} is not a number") from None
        qid = (row.get("id") or "").strip() or "q-" + hashlib.sha1(question.encode("utf-8")).hexdigest()[:10]
        extra = {"source": (row.get("source") or "").strip(), "confidence": 90}
        if verbatim != question:
            extra["question"] = verbatim
        return {"statement": question, "statement_id": qid, "ground_truth": answer, "extra": extra}

    def item_key(self, fields: Mapping[str, Any]) -> str:
        return f"{fields['statement_id']}|{fields['extra']['confidence']}"
