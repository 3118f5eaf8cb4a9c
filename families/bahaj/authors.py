"""Bahaj et al. (2024), overprecision, as the authors' notebooks ran it (../shared/data/bahaj2024-protocol/).

The wording is in ``studies/bahaj/templates.toml`` (Jinja2 templates named after the authors' blocks, byte-exact);
this module holds the logic:

- :func:`generation_prompt`: the prompt in the authors' order (§1.4): GEN, CONF_c, FORM (vanilla or CoT),
  CONFK, the hint disclaimer (only with a hint), ``Question: q``, the hint line (empty for hint0), ``Answer:``.
  CONF_c's tail is ``(100 − c)/2`` as Python float text (:func:`tail_pct`: "2.5", "5.0", …), c an integer.
- :func:`draw_hint`: the misleading hint of §1.5, drawn the authors' way (two bounds ``A + s·n`` around
  ``A = |trunc(answer)|``), but from a seeded generator (:func:`hint_rng`: one per question × level × try),
  and returned so that the hint shown is stored with the answer.
- :func:`refinement_prompt`, :func:`candidate_line`: self-refinement (§5.2–5.3): the raw replies shown as
  candidates, flattened with "|" and tagged with their level, in the single- or mixed-confidence template.
- :func:`authors_bounds`: the authors' rule-based cleaner (§2.2), lossy cases included and named
  (:data:`CASES`), and :func:`literal_reply` / :func:`refinement_intervals`: a refinement reply read as a
  Python literal (``ast.literal_eval``, never ``eval``) and scored as §5.6 does.
"""
from __future__ import annotations

import ast
import random
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

from config.paths import site_folder
from surveys.definition.templates import render

TEMPLATES_FILE = site_folder("studies") / "bahaj" / "templates.toml"
LEVELS_LOOP_ORDER: tuple[int, ...] = (95, 90, 60, 70, 80)  # the authors' loop order [P2:15 construct_possible_df]
HINT_CONDITIONS: tuple[str, ...] = ("hint0", "hint1", "hint3", "hint8")
NO_HINT = "hint0"
STRATEGIES: tuple[str, ...] = ("vanilla", "cot")
REFINE_SETTINGS: tuple[str, ...] = ("single", "mixed")
REFINE_ATTEMPTS = 5  # a refinement reply that is no Python literal is asked again, 5 asks in all [SR:15 process_]
MAX_LITERAL_CHARS = 100_000  # a longer reply is not handed to the parser (it is no answer of this format)


@lru_cache(maxsize=1)
def templates() -> dict[str, Any]:
    """The template strings of ``studies/bahaj/templates.toml`` (read once)."""
    with TEMPLATES_FILE.open("rb") as handle:
        return tomllib.load(handle)


def tail_pct(confidence: int) -> str:
    """The tail probability CONF_c shows, ``(100 − c)/2`` as Python float text: 95 → "2.5", 90 → "5.0"."""
    return str((100 - int(confidence)) / 2)


def confidence_block(confidence: int) -> str:
    """CONF_c for the level ``confidence`` (the authors' ``get_conf_instr(c, "both")``)."""
    return render(templates()["confidence"], {"tail_pct": tail_pct(confidence), "confidence": int(confidence)})


# --- hints (§1.5) ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Hint:
    """The hint a prompt shows: its condition, the drawn bounds (None for hint0) and the text ("" for hint0)."""

    condition: str
    lower: int | None = None
    upper: int | None = None
    text: str = ""

    def record(self) -> dict[str, Any]:
        """What is stored with the answer."""
        return {"condition": self.condition, "lower": self.lower, "upper": self.upper}


def hint_rng(seed: int | None, item_key: str, sample_index: int) -> random.Random:
    """The generator of one call's hint: one per (seed, question × level × hint condition, try)."""
    return random.Random(f"bahaj-hint|{seed if seed is not None else 0}|{item_key}|{sample_index}")


def draw_hint_bounds(answer: float, rng: random.Random) -> tuple[int, int]:
    """The authors' draw [P2:15 generate_misleading_hint]: A = |int(float(answer))|; each bound is A + s·n with
    n uniform in [−A, A] and s in {−1, +1}, drawn in that order; the hint is (min, max), integers in [0, 2A]."""
    a = abs(int(float(answer)))
    bounds = []
    for _ in range(2):
        noise = rng.randint(-a, a)
        bounds.append(a + rng.choice([-1, 1]) * noise)
    return min(bounds), max(bounds)


def draw_hint(condition: str, answer: float, rng: random.Random) -> Hint:
    """The hint of ``condition`` for a question whose true answer is ``answer``. The draw is made for hint0
    too (the authors' code draws on every call), so a condition never shifts another's draws."""
    prefixes = templates()["hint_prefixes"]
    if condition not in prefixes:
        raise ValueError(f"unknown hint condition {condition!r} (known: {', '.join(prefixes)})")
    lower, upper = draw_hint_bounds(answer, rng)
    if condition == NO_HINT:
        return Hint(condition)
    text = render(templates()["hint"], {"hint_prefix": prefixes[condition], "hint_lower": lower,
                                        "hint_upper": upper})
    return Hint(condition, lower, upper, text)


# --- generation (§1.4) -------------------------------------------------------------------------------------
def generation_prompt(question: str, confidence: int, strategy: str, hint: Hint | None = None) -> str:
    """The authors' generation prompt [P2:15 create_prompt, ci_exaplain=True, conf_prompt_type "both"]."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)})")
    t = templates()
    return render(t["generation"], {
        "gen": t["gen"], "confidence": confidence_block(confidence), "format": t[strategy],
        "confidence_knowledge": t["confidence_knowledge"], "hint_disclaimer": t["hint_disclaimer"],
        "question": question, "hint": hint.text if hint else ""})


# --- self-refinement (§5.2–5.3) ----------------------------------------------------------------------------
def candidate_line(reply: str, confidence: int) -> str:
    """One candidate: ``- `` + the raw reply with newlines as "|" and every ``` removed + ``|confidence_level: c%``."""
    pipes = reply.replace("\n", "|").replace("```", "")
    return render(templates()["candidate"], {"reply_pipes": pipes, "confidence": int(confidence)})


def refinement_prompt(question: str, candidates: Iterable[tuple[str, int]], setting: str) -> str:
    """The refinement prompt of ``setting`` (single or mixed) for ``question`` and (raw reply, level) pairs."""
    if setting not in REFINE_SETTINGS:
        raise ValueError(f"unknown refinement setting {setting!r} (known: {', '.join(REFINE_SETTINGS)})")
    lines = "\n".join(candidate_line(reply, c) for reply, c in candidates)
    return render(templates()[f"refine_{setting}"], {"question": question, "possible_answers": lines})


def draw_candidates(pool: Sequence[Any], n: int, setting: str, rng: random.Random) -> list[Any]:
    """The candidates shown (§5.2): single, n draws **with replacement** from the level's tries; mixed, n
    **without replacement** from the question's responses (all of them when there are fewer)."""
    if not pool:
        return []
    if setting == "single":
        return [pool[rng.randrange(len(pool))] for _ in range(n)]
    return rng.sample(list(pool), min(n, len(pool)))


# --- the authors' cleaner (§2.2) ---------------------------------------------------------------------------
BOUND_KEYS = ("lower_bound", "upper_bound")
CASES: dict[str, str] = {
    "scale_word_dropped": "a scale word after the number is dropped (\"1.5 million\" → 1.5)",
    "exponent_mangled": "an exponent is joined to the digits (\"2.5e6\" → 2.56, \"10^6\" → 106)",
    "comma_removed": "a comma between digits is removed (\"1,200\" → 1200)",
    "leading_text_erased": "a value starting with a symbol or a word is erased (\"$1,200\", \"+5\", "
                           "\"approximately 5\" → missing)",
    "numbers_joined": "several numbers are joined into one (\"-3 to 5\" → -35, \"3/4\" → 34)",
    "not_a_number": "what is left is not a number (\"10-20\") → missing",
    "key_missed": "a bound's line is not recognised (\"- lower_bound:\", \"1. lower_bound:\") → missing",
    "empty_value": "the bound's line has no value (e.g. the number on the next line) → missing",
}
_UNITS_FIRST = re.compile(r"^(?![0-9.-]).*")
_NOT_NUMBER_CHAR = re.compile(r"[^0-9.-]")
_SCALE = re.compile(r"\d\s*(thousand|million|billion|trillion|bn|mn)\b")
_EXPONENT = re.compile(r"\d\s*(e[+-]?\d|\^|\*\*|x\s*10|×\s*10)")
_COMMA = re.compile(r"\d,\d")
_NUMERIC_RUN = re.compile(r"[0-9.]+")


def remove_units(value: str) -> str:
    """The authors' ``remove_units_if_starts_with_number`` [CL:15], exactly."""
    value = value.strip()
    value = re.sub(_UNITS_FIRST, "", value)
    return re.sub(_NOT_NUMBER_CHAR, "", value)


def to_numeric(text: str | None) -> float | None:
    """``pd.to_numeric(..., errors='coerce')`` on the cleaned text: a number, or None (NaN) [T2:27]."""
    if text is None or not text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def value_cases(value: str, cleaned: str) -> list[str]:
    """The lossy cases (:data:`CASES`) the cleaner's rules hit on one bound's value text (lower-cased)."""
    text = value.strip()
    if not text:
        return ["empty_value"]
    if not cleaned:
        return ["leading_text_erased"] if re.search(r"\d", text) else []
    cases = []
    if _SCALE.search(text):
        cases.append("scale_word_dropped")
    if _EXPONENT.search(text):
        cases.append("exponent_mangled")
    if _COMMA.search(text):
        cases.append("comma_removed")
    runs = _NUMERIC_RUN.findall(_COMMA.sub(lambda m: m.group(0).replace(",", ""), text))
    if len([r for r in runs if re.search(r"\d", r)]) > 1 and "exponent_mangled" not in cases:
        cases.append("numbers_joined")
    if to_numeric(cleaned) is None:
        cases.append("not_a_number")
    return cases


@dataclass(frozen=True)
class AuthorsReading:
    """The bounds the authors' cleaner reads (None = missing or NaN), the cleaned texts, and the lossy cases
    that touched this answer. Reversed bounds and point intervals are kept as they are."""

    lower: float | None
    upper: float | None
    texts: Mapping[str, str | None] = field(default_factory=dict)
    cases: tuple[str, ...] = ()

    @property
    def parsed(self) -> bool:
        """Both bounds are numbers (the others are misses in the hit denominator)."""
        return self.lower is not None and self.upper is not None


def authors_bounds(full_output: str) -> AuthorsReading:
    """The authors' rule-based cleaner [CL:15 parse_ans] and numeric conversion [T2:27 process_data]:
    lines with ":"; key = the text before the first ":" lower-cased, stripped, spaces → "_", "*" and "-"
    deleted, stripped; value = the text between the first and second ":" lower-cased, stripped, units removed
    (:func:`remove_units`); the last line of a key wins; only ``lower_bound`` / ``upper_bound`` are kept."""
    found: dict[str, str] = {}
    raw_values: dict[str, str] = {}
    missed: set[str] = set()
    for line in (full_output or "").split("\n"):
        if ":" not in line:
            continue
        parts = line.split(":")
        key = parts[0].lower().strip().replace(" ", "_").replace("*", "").replace("-", "").strip()
        value = parts[1].lower().strip()
        found[key] = remove_units(value)
        raw_values[key] = value
        for bound in BOUND_KEYS:
            if key != bound and bound in key:
                missed.add(bound)
    cases: list[str] = []
    for bound in BOUND_KEYS:
        if bound in found:
            cases += value_cases(raw_values[bound], found[bound])
        elif bound in missed:
            cases.append("key_missed")
    ordered = tuple(dict.fromkeys(cases))
    texts = {bound: found.get(bound) for bound in BOUND_KEYS}
    return AuthorsReading(to_numeric(texts["lower_bound"]), to_numeric(texts["upper_bound"]), texts, ordered)


def case_counts(readings: Iterable[AuthorsReading]) -> dict[str, int]:
    """How many answers each lossy case touched (every case listed, 0 when none)."""
    counts = dict.fromkeys(CASES, 0)
    for reading in readings:
        for case in reading.cases:
            counts[case] += 1
    return counts


# --- self-refinement replies (§5.4, §5.6) ------------------------------------------------------------------
def literal_reply(reply: str) -> dict[str, Any]:
    """A refinement reply as the authors read it: ``ast.literal_eval`` of the stripped text, which must give a
    dict (its keys were merged into the record). ValueError with the reason otherwise (the reply is then asked
    again, :data:`REFINE_ATTEMPTS` asks in all)."""
    text = (reply or "").strip()
    if len(text) > MAX_LITERAL_CHARS:
        raise ValueError(f"reply longer than {MAX_LITERAL_CHARS} characters")
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise ValueError(f"not a Python literal: {exc.__class__.__name__}: {exc}"[:300]) from None
    if not isinstance(value, dict):
        raise ValueError(f"a Python literal, but a {type(value).__name__}, not a dict")
    return value


def _pair(value: Any) -> tuple[float | None, float | None] | None:
    if not isinstance(value, list) or len(value) != 2:
        return None
    return tuple(to_numeric(str(v).strip()) if not isinstance(v, (int, float)) or isinstance(v, bool)
                 else float(v) for v in value)  # type: ignore[return-value]


def refinement_intervals(reply: Mapping[str, Any]) -> tuple[tuple[float | None, float | None],
                                                             tuple[float | None, float | None]] | None:
    """(chosen, proposed) bounds of a parsed reply, or None when the authors' scoring drops it [T3:30]: both
    ``chosen_answer`` and ``proposed_answer`` must be lists of length 2; bounds are coerced to numbers (None
    when they are not)."""
    chosen, proposed = _pair(reply.get("chosen_answer")), _pair(reply.get("proposed_answer"))
    if chosen is None or proposed is None:
        return None
    return chosen, proposed


# --- the two named readings (report option ``reading``) ----------------------------------------------------
READINGS: tuple[str, ...] = ("text", "authors")  # read_answer: families/bahaj/instrument.py
