"""Tang et al. RQ1: the 17 WEPs in context sentences, for the ``wep_probability`` instrument.

Four context settings (the paper's Methods): CNC (concise, gender-neutral), ENC (extended scenarios of a few
sentences), FCNC (she/her as the subject) and MCNC (he/him), in English or Chinese. Counts follow the paper's
36 contexts: 15 CNC, 11 ENC and 10 gendered contexts (each asked once as FCNC and once as MCNC), the numbers
of answers per WEP in the published results; so each WEP × setting has 15 / 11 / 10 / 10 answers per agent.
The contexts are written for this project and live in ``rq1_contexts.toml`` next to this module.

Each item: ``expression`` = the English WEP (so analyses line up across languages), ``statement`` = the
context sentence — in English a template with ``{}`` where the WEP goes (the WEP written out, capitalised,
where it opens a sentence), in Chinese the whole sentence with the Chinese WEP —, ``statement_id`` (e.g.
``CNC-03``; FCNC-k and MCNC-k differ only in the pronoun), ``context`` = the setting, ``language``, and in
``extra`` the proposition without the WEP (the paper asks "with what probability do you think …?" about it)
and the WEP as written in the sentence.
"""
from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

from families.tang.wep_probability import EXPRESSIONS, WepProbability

SETTINGS: tuple[str, ...] = ("CNC", "ENC", "FCNC", "MCNC")
LANGUAGES: tuple[str, ...] = ("en", "zh")
DATA = Path(__file__).with_name("rq1_contexts.toml")
SLOT = "{}"


class DesignError(ValueError):
    """Options a design cannot build items from."""


@lru_cache(maxsize=1)
def load_contexts(path: Path = DATA) -> dict[str, Any]:
    """The context file, checked: a frame for every WEP in both languages."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    for language in LANGUAGES:
        missing = set(EXPRESSIONS) - set(data["frames"][language])
        if missing:
            raise DesignError(f"{path.name}: no {language} frame for {sorted(missing)}")
    return data


def zh_expressions() -> dict[str, str]:
    """The Chinese rendering of each of the 17 WEPs used in the Chinese contexts."""
    return {wep: frame["wep"] for wep, frame in load_contexts()["frames"]["zh"].items()}


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fill(text: str, values: dict[str, str]) -> str:
    return text.format(**values) if "{" in text else text


def _english(frame: str, wep: str, ctx: dict[str, str], pronouns: dict[str, str]) -> tuple[str, str]:
    """(statement template, proposition) of one English context with one WEP frame."""
    subject = ctx.get("subject") or pronouns["subject"]
    rest = _fill(ctx["rest"], pronouns)
    clause = f"{subject} {ctx['aux']} {rest}"
    sentence = frame.format(wep=SLOT, clause=clause, Subject=_capitalise(subject), aux=ctx["aux"], rest=rest)
    if sentence.startswith(SLOT):  # a WEP that opens the sentence is written out, capitalised
        sentence = _capitalise(wep) + sentence[len(SLOT):]
    setup = ctx.get("setup")
    return (f"{setup} {sentence}" if setup else sentence), clause


def _chinese(frame: dict[str, str], ctx: dict[str, str], pronouns: dict[str, str]) -> tuple[str, str, str]:
    """(sentence, proposition, Chinese WEP) of one Chinese context with one WEP frame."""
    subject = (ctx.get("subject") or pronouns["subject"]) + ctx.get("time", "")
    predicate = _fill(ctx["predicate"], pronouns)
    sentence = frame["sentence"].format(wep=frame["wep"], subject=subject, predicate=predicate)
    setup = ctx.get("setup", "")
    return setup + sentence, subject + predicate, frame["wep"]


def contexts(setting: str, language: str) -> list[tuple[str, dict[str, str], dict[str, str]]]:
    """(statement id, context, pronouns) of one setting in one language, in file order."""
    data = load_contexts()
    if setting in ("FCNC", "MCNC"):
        entries, pronouns = data["gendered"], data["pronouns"][setting][language]
    else:
        entries, pronouns = data[setting], {}
    return [(f"{setting}-{i:02d}", entry[language], pronouns) for i, entry in enumerate(entries, start=1)]


def generate(study: Any = None, settings: tuple[str, ...] | list[str] = SETTINGS,
             language: str = "en") -> list[dict[str, Any]]:
    """Item field dicts: every WEP × context of ``settings`` in ``language`` ("en" or "zh"), keys as
    :meth:`WepProbability.item_key` builds them (context|language|statement id|expression)."""
    if isinstance(settings, str):
        settings = [s for s in re.split(r"[,\s]+", settings) if s]
    unknown = [s for s in settings if s not in SETTINGS]
    if unknown or not settings:
        raise DesignError(f"unknown context setting(s) {unknown}; choose from {', '.join(SETTINGS)}")
    if language not in LANGUAGES:
        raise DesignError(f"unknown language {language!r}; choose from {', '.join(LANGUAGES)}")
    instrument = getattr(study, "instrument", WepProbability.name)
    if instrument != WepProbability.name:
        raise DesignError(f"the tang_rq1 design makes {WepProbability.name} items, not {instrument} items")
    frames = load_contexts()["frames"][language]
    kind = WepProbability()
    items = []
    for setting in settings:
        for statement_id, ctx, pronouns in contexts(setting, language):
            for wep in EXPRESSIONS:
                if language == "en":
                    statement, proposition = _english(frames[wep], wep, ctx, pronouns)
                    written = wep
                else:
                    statement, proposition, written = _chinese(frames[wep], ctx, pronouns)
                fields = {"expression": wep, "statement": statement, "statement_id": statement_id,
                          "context": setting, "language": language,
                          "extra": {"proposition": proposition, "wep": written}}
                fields["key"] = kind.item_key(fields)
                items.append(fields)
    return items
