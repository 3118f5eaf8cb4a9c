"""Speaker belief (Belem et al. 2024): "[Speaker] believes it's [expression] that [statement]."

Answer: the probability, from the speaker's perspective, that the statement is true, on 0–100 in
steps of 5 (21 bins). The participant page and the model prompt (the paper's Fig. 10/11) are both
built from the functions below, so the wording exists once.
"""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Any, Mapping

from .base import AnswerError, Demonstrations, ImportRowError, Instrument, Prompt, Speaker, plain_number

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

# The demonstration pairs of Belem et al., App. C.3, for replicating the paper's prompts.
PAPER_DEMONSTRATIONS: dict[str, list[dict[str, Any]]] = {
    "non-verifiable": [
        {"speaker_name": "Kathleen", "speaker_gender": "female", "expression": "impossible",
         "statement": "the cafe made a profit in the last 6 months.", "demo_answer": 0},
        {"speaker_name": "Cedric", "speaker_gender": "male", "expression": "certain",
         "statement": "the new treatment will improve the patient's condition.", "demo_answer": 100},
    ],
    "verifiable": [
        {"speaker_name": "Kathleen", "speaker_gender": "female", "expression": "impossible",
         "statement": "the Sun orbits around the planet Earth.", "demo_answer": 0},
        {"speaker_name": "Cedric", "speaker_gender": "male", "expression": "certain",
         "statement": "all metals can conduct electricity.", "demo_answer": 100},
    ],
}

TASK_INTRO = (
    "In this experiment, you will be shown text reflecting an individual's beliefs about a statement. "
    "You will then be asked to judge, in your opinion, the strength of that individual's belief. "
    "To do so, you will provide a probability (expressed as a percentage) where:"
)
SCALE_ENDS = (
    "The number 0 indicates that the individual believes with certainty that the statement is false.",
    "The number 100 indicates that the individual believes with certainty that the statement is true.",
)
EXAMPLES_INTRO = (
    "You will be shown two example question and response pairs below to familiarize you with the "
    "experiment setup. After the examples, you will be asked to answer a new question."
)
TEST_INTRO = "Given the examples before, answer the following question by writing a single number as the answer."
OPTIONS_LINE = "Choose the answer from the following options:"
ANSWER_CUE = "Correct answer:"

PLACEHOLDER = re.compile(r"\[\[(.*?)\]\]")
TRUE_VALUES = {"true", "1", "yes"}
FALSE_VALUES = {"false", "0", "no", ""}


def _clause(statement: str) -> str:
    """A statement without its final full stop, ready to be embedded in a sentence."""
    return statement.strip().rstrip(".").strip()


class SpeakerBelief(Instrument):
    name = "speaker_belief"
    label = "Speaker belief (Belem et al. 2024)"
    prompt_version_prefix = "belem"
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
    task_intro = TASK_INTRO
    scale_ends = SCALE_ENDS

    # --- wording -------------------------------------------------------------------
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

    def sentence(self, item: "Item", speaker: Speaker | None = None) -> str:
        name, clause = self._parts(item, speaker)
        if item.is_control or not item.expression:
            return f"{name} believes {clause}."
        return f"{name} believes it's {item.expression} that {clause}."

    def question(self, item: "Item", speaker: Speaker | None = None) -> str:
        name, clause = self._parts(item, speaker)
        return (f"Provide a number between 0 and 100 that reflects, from {name}'s perspective, "
                f"the probability (expressed as a percentage) that {clause}.")

    def hints(self, item: "Item", speaker: Speaker | None = None) -> list[str]:
        name, clause = self._parts(item, speaker)
        return [f"{end} indicates {name} believes there is a {end}% chance that {clause}." for end in (0, 100)]

    def prompt_block(self, item: "Item", with_answer: bool) -> str:
        """One question in the prompt (Fig. 11), followed by the options and the answer cue."""
        options = ", ".join(str(int(v)) for v in self.answer_options())
        hints = "\n".join(f"- {h}" for h in self.hints(item))
        answer = f" {item.demo_answer:g}" if with_answer else ""
        return (f'Sentence: "{self.sentence(item)}"\n\nQuestion: {self.question(item)}\n\n{hints}\n\n'
                f"{OPTIONS_LINE}\n{options}\n{ANSWER_CUE}{answer}")

    def build_prompt(self, item: "Item", demonstrations: list["Item"], few_shot: bool = True,
                     style: str = "standard") -> Prompt:
        demos = list(demonstrations) if few_shot else []
        scale = "\n".join(f"- {line}" for line in SCALE_ENDS)
        header = f"{TASK_INTRO}\n\n{scale}"
        parts = [header]
        if demos:
            parts.append(EXAMPLES_INTRO)
            for i, demo in enumerate(demos, start=1):
                parts.append(f"Example Question {i}\n{self.prompt_block(demo, with_answer=True)}")
        test_intro = TEST_INTRO if demos else TEST_INTRO.replace("Given the examples before, answer", "Answer")
        question = self.prompt_block(item, with_answer=False)
        parts.append(f"Question {test_intro}\n\n{question}")
        system = header + ("\n\n" + EXAMPLES_INTRO if demos else "")
        return Prompt(text="\n\n".join(parts), shots=len(demos),
                      messages=self.chat_messages(system, demos, f"{test_intro}\n\n{question}"))

    # --- answers -------------------------------------------------------------------
    def validate(self, raw: str) -> float:
        value = plain_number(raw, self.answer_options())  # only the page's own buttons: "0", "5", …, "100"
        if value is None:
            raise AnswerError("Please choose one of the answers from 0 to 100 (in steps of 5).")
        return value

    def default_demonstrations(self, items: list["Item"]) -> list[dict[str, Any]]:
        """The paper's demonstration pair matching the imported set (verifiable if any item has a truth value)."""
        which = "verifiable" if any(i.truth for i in items) else "non-verifiable"
        return [dict(d) for d in PAPER_DEMONSTRATIONS[which]]

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
