"""Speaker belief (Belem et al. 2024): "[Speaker] believes it's [expression] that [statement]."

Answer: the probability, from the speaker's perspective, that the statement is true, on 0–100 in
steps of 5 (21 bins). The wording (the participant page and the paper's Fig. 10/11 prompt, the task
description of the instructions page) is in the shipped definition ``studies/belem/study.toml``, or a
study's own; this module holds the family's logic: the fields its templates compute (the speaker shown,
the statement clause with pronouns filled, the scale), the expressions and their order, the speaker
names, the item import and its checks, and the paper's demonstrations for a study imported without any.
"""
from __future__ import annotations

import ast
import re
import tomllib
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Mapping

from surveys.definition.files import STUDIES_DIR

from surveys.instruments.base import AnswerError, Demonstrations, ImportRowError, Instrument, Speaker, plain_number

if TYPE_CHECKING:  # pragma: no cover
    from surveys.models import Item

EXPRESSIONS: tuple[str, ...] = (
    "almost certain",
    "highly likely",
    "very likely",
    "likely",
    "probable",
    "somewhat likely",
    "somewhat unlikely",
    "uncertain",
    "possible",
    "unlikely",
    "not likely",
    "doubtful",
    "very unlikely",
    "highly unlikely",
)
CONTROL = "control"

# Belem et al., Table 4: the gender-balanced name list speakers are drawn from.
NAMES: dict[str, tuple[str, ...]] = {
    "female": ("Amanda", "Bonnie", "Camille", "Catherine", "Cheri", "Ethel", "Gabriela", "Jacquelyn",
               "Jessica", "Laura", "Olga", "Roxanne", "Silvia", "Tara", "Violet"),
    "male": ("Brendan", "Bruce", "David", "Gary", "Isaac", "Jeffery", "Joey", "Johnnie", "Kenny", "Lance",
             "Marco", "Mike", "Nathan", "Nick", "Raul"),
}
PRONOUNS: dict[str, dict[str, str]] = {
    "female": {"they": "she", "their": "her"},
    "male": {"they": "he", "their": "his"},
    "nonbinary": {"they": "they", "their": "their"},
}

# The demonstration pairs of Belem et al., App. C.3 (by set: "non-verifiable", "verifiable").
PAPER_DEMONSTRATIONS_FILE = STUDIES_DIR / "belem" / "paper-demonstrations.toml"

PLACEHOLDER = re.compile(r"\[\[(.*?)\]\]")
TRUE_VALUES = {"true", "1", "yes"}
FALSE_VALUES = {"false", "0", "no", ""}


@lru_cache(maxsize=1)
def _paper_demonstrations() -> dict[str, tuple[dict[str, Any], ...]]:
    with PAPER_DEMONSTRATIONS_FILE.open("rb") as handle:
        data = tomllib.load(handle)
    return {which: tuple(pair) for which, pair in data.items()}


def paper_demonstrations(which: str) -> list[dict[str, Any]]:
    """The paper's demonstration pair of set ``which`` ("non-verifiable" or "verifiable") as Item fields
    (``answer`` as ``demo_answer``), read from ``studies/belem/paper-demonstrations.toml``."""
    return [{name: value for name, value in demo.items() if name != "answer"} | {"demo_answer": demo["answer"]}
            for demo in _paper_demonstrations()[which]]


def _clause(statement: str) -> str:
    """A statement without its final full stop, ready to be embedded in a sentence."""
    return statement.strip().rstrip(".").strip()


class SpeakerBelief(Instrument):
    name = "speaker_belief"
    label = "Speaker belief (Belem et al. 2024)"
    prompt_version_prefix = "belem"
    # the run field's default until elicitation's migration 0018: older runs of any kind may hold it
    legacy_prompt_versions = ("belem-2shot-v1",)
    report_sections = ("belem",)
    # Belem et al.'s ranking rule (families/belem/rules.py), on by default
    attention_filter_default = True
    attention_rule = "belem-ranking"
    # Belem's design: two worked examples on the instructions page and in the 2-shot prompt
    demonstrations = Demonstrations(fields=("demo_order", "speaker_name", "speaker_gender", "expression",
                                            "statement", "demo_answer"), required=2)
    template_name = "surveys/items/speaker_belief.html"
    import_columns = ("statement_type", "name", "gender", "pronouns", "is_control",
                      "uncertainty_expression", "statement_id", "statement")
    optional_columns = ("statement_uuid",)
    template_rows = (
        {"statement_type": "future", "name": "Ann", "gender": "female", "pronouns": "", "is_control": "False",
         "uncertainty_expression": "likely", "statement_id": "future-1",
         "statement": "[[they]] will get a parking spot near the office tomorrow.", "statement_uuid": ""},
        {"statement_type": "future", "name": "Sam", "gender": "nonbinary",
         "pronouns": "{'they': 'they', 'their': 'their'}", "is_control": "True", "uncertainty_expression": "control",
         "statement_id": "future-2", "statement": "[[their]] train will be on time on Friday morning.",
         "statement_uuid": ""},
    )
    expressions = EXPRESSIONS
    names = NAMES
    default_definition = "belem/study.toml"

    # --- what the templates compute ------------------------------------------------------------------
    def _parts(self, item: "Item", speaker: Speaker | None) -> tuple[str, str]:
        """(speaker name, statement clause with pronouns filled) for one rendering."""
        if speaker is not None:
            name, gender = speaker
            pronouns = PRONOUNS.get(gender, PRONOUNS["nonbinary"])
        else:
            name, gender = item.speaker_name, item.speaker_gender
            pronouns = item.extra.get("pronouns") or PRONOUNS.get(gender, PRONOUNS["nonbinary"])
        clause = _clause(item.statement)
        for placeholder, word in pronouns.items():
            clause = clause.replace(f"[[{placeholder}]]", word)
        return name, clause

    def template_context(self, item: "Item", speaker: Speaker | None = None) -> dict[str, Any]:
        """The item's fields and named texts, plus ``speaker`` (the name shown: the participant's drawn
        speaker, else the item's), ``clause`` (the statement without its final full stop, its ``[[they]]``
        and ``[[their]]`` filled with the speaker's pronouns) and ``scale_values`` (0, 5, …, 100)."""
        context = super().template_context(item, speaker)
        name, clause = self._parts(item, speaker)
        context.update(speaker=name, clause=clause, scale_values=self.answer_options())
        return context

    # --- answers -------------------------------------------------------------------
    def validate(self, raw: str) -> float:
        value = plain_number(raw, self.answer_options())  # only the page's own buttons: "0", "5", …, "100"
        if value is None:
            raise AnswerError("Please choose one of the answers from 0 to 100 (in steps of 5).")
        return value

    def default_demonstrations(self, items: list["Item"]) -> list[dict[str, Any]]:
        """The paper's demonstration pair matching the imported set (verifiable if any item has a truth value)."""
        which = "verifiable" if any(i.truth for i in items) else "non-verifiable"
        return paper_demonstrations(which)

    def canonical_order(self) -> list[str]:
        return list(EXPRESSIONS)

    # --- import --------------------------------------------------------------------
    def item_fields_from_row(self, row: Mapping[str, str]) -> dict[str, Any]:
        def need(column: str) -> str:
            value = (row.get(column) or "").strip()
            if not value:
                raise ImportRowError(column, "is empty")
            return value

        statement = need("statement")
        statement_id = need("statement_id")
        statement_type = need("statement_type")
        expression = need("uncertainty_expression").lower()
        control_raw = (row.get("is_control") or "").strip().lower()
        if control_raw in TRUE_VALUES:
            is_control = True
        elif control_raw in FALSE_VALUES:
            is_control = False
        else:
            raise ImportRowError("is_control", f"{row.get('is_control')!r} is not True or False")
        if is_control != (expression == CONTROL):
            raise ImportRowError("uncertainty_expression",
                                 f"{expression!r} does not match is_control={row.get('is_control')}")
        if not is_control and expression not in EXPRESSIONS:
            raise ImportRowError("uncertainty_expression",
                                 f"{expression!r} is not one of the 14 expressions ({', '.join(EXPRESSIONS)})")
        gender = need("gender").lower()
        if gender not in PRONOUNS:
            raise ImportRowError("gender", f"{gender!r} is not one of {', '.join(PRONOUNS)}")
        pronouns_raw = (row.get("pronouns") or "").strip()
        pronouns = PRONOUNS[gender]
        if pronouns_raw:
            try:
                pronouns = ast.literal_eval(pronouns_raw)
            except Exception:  # literal_eval raises ValueError, SyntaxError, TypeError, RecursionError…
                pronouns = None
            if not isinstance(pronouns, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in pronouns.items()
            ):
                raise ImportRowError("pronouns", f"{pronouns_raw!r} is not a dict such as "
                                                 "{'their': 'her', 'they': 'she'}")
        missing = sorted(set(PLACEHOLDER.findall(statement)) - set(pronouns))
        if missing:
            raise ImportRowError("statement" if missing[0] not in ("they", "their") else "pronouns",
                                 f"no pronoun for [[{missing[0]}]] used in the statement "
                                 "(placeholders: [[they]], [[their]])")
        truth = ""
        if statement_type.endswith("__true"):
            truth = "true"
        elif statement_type.endswith("__false"):
            truth = "false"
        return {
            "expression": "" if is_control else expression,
            "is_control": is_control,
            "speaker_name": need("name"),
            "speaker_gender": gender,
            "statement": statement,
            "statement_id": statement_id,
            "statement_type": statement_type,
            "truth": truth,
            "extra": {"pronouns": pronouns} | ({"uuid": row["statement_uuid"]} if row.get("statement_uuid") else {}),
        }

    def item_key(self, fields: Mapping[str, Any]) -> str:
        """The file's statement_uuid where given (Belem's verifiable file reuses statement ids),
        else statement id and expression."""
        return fields["extra"].get("uuid") or f"{fields['statement_id']}|{fields['expression'] or CONTROL}"
