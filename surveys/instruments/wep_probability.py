"""WEP probability (Fagen-Ulmschneider 2015; Tang et al. RQ1): the probability a word of estimative
probability conveys.

Minimal form: the expression alone — "How probable is an event described as 'likely'?" — answered
with a number from 0 (impossible) to 100 (certain). The participant page offers 0–100 in steps of 5
(21 buttons, the bins of the analysis); answers imported from the Fagen-Ulmschneider survey and model
answers may be any number from 0 to 100. Tang's context sentences (CNC/ENC/FCNC/MCNC, English and Chinese) come later: an item's
``statement`` may already hold a context template with ``{}`` where the WEP goes, and then the question
quotes that sentence. The participant page and the model prompt are both built from the functions below.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from .base import AnswerError, ImportRowError, Instrument, Prompt, Speaker, page_number

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

TASK_INTRO = (
    "People use words such as \"likely\" or \"we doubt\" to say how probable something is. "
    "For each word or phrase you are shown, say how probable an event described with it is, "
    "as a percentage from 0 to 100, where:"
)
SCALE_ENDS = (
    "0 means the event is impossible.",
    "100 means the event is certain.",
)
EXAMPLES_INTRO = "Two worked examples follow. After them, answer the new question."
ANSWER_INSTRUCTION = "Answer with a single number from 0 to 100."
ANSWER_CUE = "Answer:"


class WepProbability(Instrument):
    name = "wep_probability"
    label = "WEP probability (Fagen-Ulmschneider 2015; Tang et al. RQ1)"
    template_name = "surveys/items/wep_probability.html"
    import_columns = ("expression",)
    scale_min = 0
    scale_max = 100
    scale_step = 5  # the page's buttons; validate() also accepts any whole number 0–100
    expressions = EXPRESSIONS
    task_intro = TASK_INTRO
    scale_ends = SCALE_ENDS

    # --- wording -------------------------------------------------------------------
    def context_sentence(self, item: "Item") -> str:
        """The item's context sentence with its WEP filled in, or "" for the expression alone."""
        template = (item.statement or "").strip()
        if not template:
            return ""
        return template.replace("{}", item.expression) if "{}" in template else template

    def sentence(self, item: "Item", speaker: Speaker | None = None) -> str:
        context = self.context_sentence(item)
        if context:
            return f'Given the statement "{context}", how probable is it?'
        return f"How probable is an event described as '{item.expression}'?"

    def question(self, item: "Item", speaker: Speaker | None = None) -> str:
        return "Give a probability from 0 (impossible) to 100 (certain)."

    def prompt_block(self, item: "Item", with_answer: bool) -> str:
        answer = f" {item.demo_answer:g}" if with_answer else ""
        return f"Question: {self.sentence(item)}\n{ANSWER_INSTRUCTION}\n{ANSWER_CUE}{answer}"

    def build_prompt(self, item: "Item", demonstrations: list["Item"], few_shot: bool = True) -> Prompt:
        demos = list(demonstrations) if few_shot else []
        scale = "\n".join(f"- {line}" for line in SCALE_ENDS)
        header = f"{TASK_INTRO}\n{scale}"
        if demos:
            header += f"\n\n{EXAMPLES_INTRO}"
        question = self.prompt_block(item, with_answer=False)
        parts = [header, *(self.prompt_block(demo, with_answer=True) for demo in demos), question]
        return Prompt(text="\n\n".join(parts), messages=self.chat_messages(header, demos, question))

    # --- answers -------------------------------------------------------------------
    def validate(self, raw: str) -> float:
        value = page_number(raw)  # digits as the number field sends them; not 1e2, ٥٠, 1_0
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
