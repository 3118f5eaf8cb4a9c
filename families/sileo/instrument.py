"""Verbalisation choice (Sileo & Moens 2023): a premise and two verbalisations of one hypothesis with different
WEPs → pick the valid one (the WEP whose consensual probability is closest to the hypothesis's probability p).

An item's ``statement`` is the PREMISE (one or more sentences); ``extra`` holds ``hypothesis`` (the fact, as it
reads inside a template), ``p`` (its probability given the premise, 0–1; also ``ground_truth``), ``valid_wep``
and ``distractor_wep`` (families/sileo/wep_scale.py), ``options`` — the two verbalisations T_p(HYPOTHESIS)
as ``[key, sentence]`` in the order drawn for this item ("A" first) — ``valid_key`` and ``dataset``
(``wep-reasoning-1hop``, ``wep-reasoning-2hops`` or ``wep-unli``). Items come from the ``wep-reasoning`` design
(families/sileo/design.py) or from a file of (premise, hypothesis, p) triples (``import_items``).

This module is the family's logic; its wording (the task description, the page's question, the prompt) is in
the shipped definition studies/sileo/study.toml, or in a study's own definition. The logic: the item's two options
(``extra["options"]``), the zero-shot prompt assembly (one user message, no demonstrations: the paper's probes use
none), the WEP pair and order drawn for an item (:func:`verbalisation_fields`), the item import and keys, and the
likelihood mode's candidates "PREMISE. T_p(HYPOTHESIS)." (elicitation/likelihood.py,
:meth:`VerbalisationChoice.likelihood_candidates`). The page shows the premise and the two verbalisations as large
buttons (the *pick* shape), which also reads a model's answer (the option's letter or sentence).
"""
from __future__ import annotations

import hashlib
import random
from typing import TYPE_CHECKING, Any, Mapping

from surveys.instruments.base import ImportRowError, Instrument, Prompt
from surveys.instruments.shapes import Option, PickShape
from families.sileo.wep_scale import choose_pair, fact_case, verbalise

if TYPE_CHECKING:  # pragma: no cover
    from surveys.models import Item

KEYS = ("A", "B")
DATASETS = ("wep-reasoning-1hop", "wep-reasoning-2hops", "wep-unli")


def verbalisation_fields(premise: str, hypothesis: str, p: float, rng: random.Random,
                         dataset: str, **extra: Any) -> dict[str, Any]:
    """Item fields for one (premise, hypothesis, p): a valid and a distractor WEP drawn with ``rng``, then the
    order of the two verbalisations (also drawn with ``rng``). ``extra`` is stored beside them."""
    valid, distractor = choose_pair(p, rng)
    sentences = {"valid": verbalise(valid, hypothesis), "distractor": verbalise(distractor, hypothesis)}
    order = ["valid", "distractor"] if rng.random() < 0.5 else ["distractor", "valid"]
    options = [[key, sentences[role]] for key, role in zip(KEYS, order)]
    return {"statement": premise, "ground_truth": float(p),
            "extra": {"dataset": dataset, "hypothesis": hypothesis, "p": float(p), "valid_wep": valid,
                      "distractor_wep": distractor, "options": options,
                      "valid_key": KEYS[order.index("valid")], **extra}}


def row_rng(*parts: str) -> random.Random:
    """A generator seeded from the row's own text: the same file always gives the same WEPs and order."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return random.Random(int(digest[:16], 16))


class VerbalisationChoice(Instrument):
    name = "verbalisation_choice"
    label = "Verbalisation choice (Sileo & Moens)"
    template_name = "surveys/items/verbalisation_choice.html"
    shape = PickShape()
    prompt_styles = ("standard",)
    report_sections = ("sileo",)
    prompt_version_prefix = "sileo"
    attention_filter_default = False
    import_columns = ("premise", "hypothesis", "p")
    optional_columns = ("key",)
    default_items_per_participant = 12
    items_per_participant_reason = "the Sileo demo's: 12 premises with a hypothesis each, about 10 minutes"
    template_rows = (
        {"premise": "A woman in a red coat is pushing a stroller across a busy street.",
         "hypothesis": "A woman is outside.", "p": "0.98", "key": "unli-01"},
        {"premise": "Two boys kick a ball back and forth on a dusty field.",
         "hypothesis": "Children are playing a game.", "p": "0.93", "key": "unli-02"},
    )
    default_definition = "sileo/study.toml"

    # --- wording (studies/sileo/study.toml) ---------------------------------------------------------------
    def options(self, item: "Item") -> list[Option]:
        return [Option(str(key), str(text)) for key, text in (item.extra or {}).get("options", [])]

    def intro(self, language: str = "en") -> dict[str, Any]:
        """The task description of the instructions page: the shipped definition's ``task_intro``."""
        named = self.wording(None).get("wording") or {}
        return {"task": named.get("task_intro", ""), "scale_ends": list(named.get("scale_ends") or [])}

    def build_prompt(self, item: "Item", demonstrations: list["Item"], few_shot: bool = True,
                     style: str = "standard") -> Prompt:
        """The definition's ``[prompt]`` templates, zero-shot: one user message (the paper's probes use no
        demonstrations)."""
        if style not in self.prompt_styles:
            raise ValueError(f"unknown prompt style {style!r} for {self.name} (known: {', '.join(self.prompt_styles)})")
        return super().build_prompt(item, [], False, style)

    def likelihood_candidates(self, item: "Item") -> list[tuple[str, str, str]]:
        """(key, "PREMISE. T_p(HYPOTHESIS).", "T_p(HYPOTHESIS).") per option, as scored by the likelihood mode
        (§4.1: the whole text, and the verbalisation alone for calibration)."""
        premise = " ".join(item.statement.split())
        if premise and premise[-1] not in ".!?":
            premise += "."
        return [(o.key, f"{premise} {o.text}", o.text) for o in self.options(item)]

    # --- import --------------------------------------------------------------------
    def item_fields_from_row(self, row: Mapping[str, str]) -> dict[str, Any]:
        """Columns: premise, hypothesis, p (0–1; the UNLI format), optional key. The WEPs and the order of the
        two verbalisations are drawn from the row's own text, so a file always gives the same items."""
        premise = " ".join((row.get("premise") or "").split())
        if not premise:
            raise ImportRowError("premise", "is empty")
        hypothesis = fact_case(row.get("hypothesis") or "")
        if not hypothesis:
            raise ImportRowError("hypothesis", "is empty")
        text = (row.get("p") or "").strip()
        try:
            p = float(text)
        except ValueError:
            raise ImportRowError("p", f"{text!r} is not a number") from None
        if not 0.0 <= p <= 1.0:
            raise ImportRowError("p", f"{text} is not a probability between 0 and 1")
        fields = verbalisation_fields(premise if premise[-1] in ".!?" else premise + ".", hypothesis, p,
                                      row_rng(premise, hypothesis, text), "wep-unli")
        fields["statement_id"] = (row.get("key") or "").strip()
        return fields

    def item_key(self, fields: Mapping[str, Any]) -> str:
        if fields.get("statement_id"):
            return fields["statement_id"]
        digest = hashlib.sha256(f"{fields['statement']}\x1f{fields['extra']['hypothesis']}".encode()).hexdigest()
        return f"unli-{digest[:12]}"
