"""WEP probability (Fagen-Ulmschneider 2015; Tang et al. RQ1): the probability a word of estimative
probability conveys, answered with a whole number from 0 (impossible) to 100 (certain).

This module is the family's logic; its wording is in the shipped definitions studies/tang-rq1/study.toml
(English) and studies/tang-rq1-zh/study.toml (Chinese), or in a study's own definition. The logic: which
shipped definition words an item (the one of the item's language, so a Chinese item is worded in Chinese whatever
its study's language; a study's own definition comes first, Instrument.item_wording), the names templates see besides the item's fields
(``context_sentence``: the item's ``statement`` with its WEP in the ``{}`` slot; ``written_expression``: the WEP as
the wording writes it; ``proposition``; ``page`` in prompts), the answer's validation (any whole number 0–100; the
page offers steps of 5, the 21 bins of the analysis), the 17 WEPs an item file may name and their order for the
attention check, Kent's anchors as worked examples of an imported study, and item keys.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from surveys.definition.files import shipped_definition
from surveys.instruments.base import AnswerError, Demonstrations, ImportRowError, Instrument, Speaker, plain_number

if TYPE_CHECKING:  # pragma: no cover
    from surveys.models import Item

# The 17 WEPs of the Fagen-Ulmschneider survey, in the survey's column order.
EXPRESSIONS: tuple[str, ...] = (
    "almost certain",
    "highly likely",
    "very good chance",
    "probable",
    "likely",
    "we believe",
    "probably",
    "better than even",
    "about even",
    "we doubt",
    "improbable",
    "unlikely",
    "probably not",
    "little chance",
    "almost no chance",
    "highly unlikely",
    "chances are slight",
)

# Highest to lowest median answer of the survey (Sileo & Moens, App. A, Table 2); ties keep that table's order.
CANONICAL_ORDER: tuple[str, ...] = (
    "almost certain",
    "highly likely",
    "very good chance",
    "we believe",
    "likely",
    "probably",
    "probable",
    "better than even",
    "about even",
    "probably not",
    "we doubt",
    "unlikely",
    "little chance",
    "chances are slight",
    "improbable",
    "highly unlikely",
    "almost no chance",
)

# Kent's anchors (Sileo & Moens, Table 2, †) as the two worked examples.
DEMONSTRATIONS: tuple[dict[str, Any], ...] = (
    {"expression": "certain", "demo_answer": 100},
    {"expression": "impossible", "demo_answer": 0},
)

# The shipped definitions that word a study without a definition of its own, by the item's language (an item in
# Chinese is worded in Chinese whatever its study's language; the instructions page follows the study's).
DEFINITIONS: dict[str, str] = {"en": "tang-rq1/study.toml", "zh": "tang-rq1-zh/study.toml"}
SLOT = "{}"  # where a context template puts the WEP


def language_of(code: str | None) -> str:
    """The shipped wording's language of a language code: "zh" for "zh", "zh-hans", "zh_Hans", …, else "en"."""
    return "zh" if (code or "").lower().startswith("zh") else "en"


def shipped_wording(language: str | None) -> Mapping[str, Any]:
    """The shipped definition (studies/tang-rq1*/study.toml) that words ``language``."""
    return shipped_definition(DEFINITIONS[language_of(language)])


def written_expression(expression: str, wording: Mapping[str, Any]) -> str:
    """The WEP as ``wording`` writes it: its named text of the same name (a Chinese rendering), else as it is."""
    written = wording.get(expression)
    return written if isinstance(written, str) and written else expression


def context_sentence(statement: str | None, written: str) -> str:
    """The item's context sentence with its WEP (``written``) in the ``{}`` slot, or "" for an expression asked
    alone."""
    template = (statement or "").strip()
    if not template:
        return ""
    return template.replace(SLOT, written) if SLOT in template else template


class WepProbability(Instrument):
    name = "wep_probability"
    label = "WEP probability (Fagen-Ulmschneider 2015; Tang et al. RQ1)"
    template_name = "surveys/items/wep_probability.html"
    import_columns = ("expression",)
    optional_columns = ("statement", "statement_id", "context", "language")
    template_rows = (
        {"expression": "likely", "statement": "", "statement_id": "", "context": "", "language": ""},
        {"expression": "probable", "statement": "", "statement_id": "", "context": "", "language": ""},
    )
    scale_min = 0
    scale_max = 100
    scale_step = 5  # the page's buttons; validate() also accepts any whole number 0–100
    expressions = EXPRESSIONS
    # Tang et al. and the Fagen-Ulmschneider survey keep every respondent: Belem's attention filter is off by
    # default (a study can still turn it on).
    attention_filter_default = False
    attention_rule = "belem-ranking"  # the installed rule, by name (the belem family's): turned on by the study
    report_sections = ("belem", "tang_rq1")
    prompt_version_prefix = "wep"
    # Kent's anchors are added to an imported study; a generated Tang RQ1 study is asked without examples
    demonstrations = Demonstrations(fields=("demo_order", "expression", "statement", "language", "demo_answer"))
    default_definition = DEFINITIONS["en"]

    # --- wording (studies/tang-rq1/study.toml, studies/tang-rq1-zh/study.toml) ------------------------------
    def shipped_wording(self, language: str | None = None) -> Mapping[str, Any]:
        """The shipped definition of ``language`` (an item's: a Chinese item is worded in Chinese whatever its
        study's language; a study's, for its instructions page)."""
        return shipped_wording(language)

    def template_context(self, item: "Item", speaker: Speaker | None = None) -> dict[str, Any]:
        """The item's fields and named texts, and what this kind computes: ``written_expression``,
        ``context_sentence`` and ``proposition`` ("" when the item has none)."""
        context = super().template_context(item, speaker)
        written = written_expression(item.expression, context["wording"])
        context["written_expression"] = written
        context["context_sentence"] = context_sentence(item.statement, written)
        context.setdefault("proposition", "")
        return context

    def context_sentence(self, item: "Item") -> str:
        """The item's context sentence with its WEP filled in, or "" for the expression alone."""
        return self.template_context(item)["context_sentence"]

    # --- answers -------------------------------------------------------------------
    def validate(self, raw: str) -> float:
        value = plain_number(raw)  # digits as the number field sends them; not 1e2, ٥٠, 1_0
        if value is None or not self.scale_min <= value <= self.scale_max:
            raise AnswerError("Please enter a number from 0 to 100.")
        if value != round(value):
            raise AnswerError("Please enter a whole number from 0 to 100.")
        return value

    def default_demonstrations(self, items: list["Item"]) -> list[dict[str, Any]]:
        """Kent's anchors: "certain" → 100 and "impossible" → 0."""
        return [dict(d) for d in DEMONSTRATIONS]

    def canonical_order(self) -> list[str]:
        return list(CANONICAL_ORDER)

    # --- import --------------------------------------------------------------------
    def item_fields_from_row(self, row: Mapping[str, str]) -> dict[str, Any]:
        """Columns: expression (required; one of the 17 WEPs), optional context, language and statement
        (a context template with ``{}`` where the WEP goes)."""
        expression = " ".join((row.get("expression") or "").split()).lower()
        if not expression:
            raise ImportRowError("expression", "is empty")
        if expression not in EXPRESSIONS:
            raise ImportRowError("expression", f"{expression!r} is not one of the 17 WEPs ({', '.join(EXPRESSIONS)})")
        statement = (row.get("statement") or "").strip()
        return {
            "expression": expression,
            "statement": statement,
            "statement_id": (row.get("statement_id") or "").strip(),
            "context": (row.get("context") or "").strip(),
            "language": (row.get("language") or "").strip() or "en",
        }

    def item_key(self, fields: Mapping[str, Any]) -> str:
        """The expression alone, or context|language|statement id|expression for context items."""
        if not (fields.get("context") or fields.get("statement_id") or fields.get("statement")):
            return fields["expression"]
        return "|".join([fields.get("context") or "-", fields.get("language") or "en",
                         fields.get("statement_id") or "-", fields["expression"]])

    def items_for_expressions(self) -> list[dict[str, Any]]:
        """Item fields for the minimal study: one item per WEP, the expression alone."""
        return [{"expression": e, "language": "en"} for e in EXPRESSIONS]
