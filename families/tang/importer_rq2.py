"""Tang et al.'s RQ2 answer files as the authors published them (``rq2_result.txt``, ``rq2_cot_result.txt``).

One Python dict literal per line (single quotes), read with ``ast.literal_eval`` (never ``eval``), e.g.
``{'id': 0, 'mean_std': (100, 10), 'ci': 0.05, 'interval': 'below 99', 'index': 0, 'answer': 'B.is likely to be'}``:

- ``mean_std``: the (μ, σ) of the NUMBERS set, (100, 10) narrow and (100, 40) wide;
- ``ci``: the confidence point; ``interval``: the interval as the prompt wrote it ("below 99", "between 99 and
  100", "below 99 or above 100", …);
- ``index`` 0–5: scenario × choice set in the authors' order — 0 height/5 choices, 1 height/3, 2 score/5,
  3 score/3, 4 sound/5, 5 sound/3;
- ``answer``: the model's text (kept as the raw answer and parsed like any other);
- ``id`` is the line's running number and not used.

Each line is matched to the study's tang-rq2 item with the same scenario, choice set, (μ, σ), confidence
point and interval text (families/tang/design_rq2.py; generate the items with ``--numbers paper`` to have
the authors' samples). A line that names no item, a malformed line and a second answer to one item are
errors naming the line; nothing is imported then.
"""
from __future__ import annotations

import ast
import io
from typing import Any, Mapping

from families.tang.design_rq2 import (CHOICE_ORDER, INTERVAL_TEXT, PAPER_NARROW, PAPER_WIDE, SCENARIOS, _fmt)
from surveys.importers import RowError, _decode
from surveys.models import Item, Study

KEYS = ("mean_std", "ci", "interval", "index", "answer")
ANSWER_COLUMN = "answer"
#: what ``import_model_answers --shape tang-rq2`` reads (the importer contract: analysis/model_answer_import.py)
SUMMARY = ("Tang et al.'s rq2_result.txt / rq2_cot_result.txt as published (one Python dict per line), matched to "
           "the study's tang-rq2 items")


def index_meaning(index: int) -> tuple[str, int]:
    """(scenario, choices) of the authors' ``index`` 0–5."""
    return SCENARIOS[index // len(CHOICE_ORDER)], CHOICE_ORDER[index % len(CHOICE_ORDER)]


def interval_text(extra: Mapping[str, Any]) -> str:
    """The interval as the prompt writes it, e.g. "below 99 or above 100"."""
    return INTERVAL_TEXT[extra["interval"]].format(low=_fmt(extra["low"]), high=_fmt(extra["high"]))


def _lookup(study: Study) -> dict[tuple, Item]:
    table = {}
    for item in study.main_items():
        e = item.extra or {}
        if not all(k in e for k in ("scenario", "choices", "mu", "sigma", "confidence", "interval", "low", "high")):
            continue
        table[(e["scenario"], int(e["choices"]), float(e["mu"]), float(e["sigma"]), round(float(e["confidence"]), 3),
               interval_text(e))] = item
    return table


def _line_dict(content: str) -> dict[str, Any]:
    try:
        value = ast.literal_eval(content.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        raise ValueError(f"not a Python dict literal ({type(exc).__name__})") from None
    if not isinstance(value, dict):
        raise ValueError("a line must hold one dict {'mean_std': …, 'ci': …, 'interval': …, 'index': …, 'answer': …}")
    missing = [k for k in KEYS if k not in value]
    if missing:
        raise ValueError(f"the dict lacks {', '.join(missing)}")
    return value


def read_rq2_answers(study: Study, data: bytes) -> tuple[list[tuple[int, Item, str]], list[RowError], str]:
    """(line, item, answer text) of every line of an authors' RQ2 file, the errors, and a note on the
    study's numbers (empty when they are the paper's)."""
    table = _lookup(study)
    if not table:
        raise ValueError(f"study {study.slug!r} has no tang-rq2 items: generate them first with "
                         f"generate_items {study.slug} --design tang-rq2 --numbers paper")
    rows, errors = [], []
    for line, content in enumerate(_decode(io.BytesIO(data)).split("\n"), start=1):
        if not content.strip():
            continue
        try:
            row = _line_dict(content)
            mean_std, index = row["mean_std"], row["index"]
            if (not isinstance(mean_std, (tuple, list)) or len(mean_std) != 2
                    or not all(isinstance(v, (int, float)) for v in mean_std)):
                raise ValueError(f"mean_std {mean_std!r} is not a pair of numbers (μ, σ)")
            if not isinstance(index, int) or not 0 <= index < len(SCENARIOS) * len(CHOICE_ORDER):
                raise ValueError(f"index {index!r} is not a scenario × choice set number 0–5")
            if not isinstance(row["ci"], (int, float)) or not isinstance(row["interval"], str):
                raise ValueError("ci must be a number and interval a text")
            if not isinstance(row["answer"], str):
                raise ValueError(f"answer {row['answer']!r} is not a text")
            scenario, choices = index_meaning(index)
            key = (scenario, choices, float(mean_std[0]), float(mean_std[1]), round(float(row["ci"]), 3),
                   " ".join(row["interval"].split()))
            item = table.get(key)
            if item is None:
                raise ValueError(f"no item of the study has {scenario}, {choices} choices, N{tuple(mean_std)}, "
                                 f"confidence {row['ci']} and interval {row['interval']!r}")
        except ValueError as exc:
            errors.append(RowError(line, "-", str(exc)))
            continue
        rows.append((line, item, row["answer"]))
    samples = {e["numbers"]: e["sample"] for e in (i.extra for i in table.values())}
    note = ""
    if samples.get("narrow") != list(PAPER_NARROW) or samples.get("wide") != list(PAPER_WIDE):
        note = ("the study's NUMBERS sets are not the authors' (generate_items --numbers paper): the answers "
                "were given to other samples")
    return rows, errors, note


read_answers = read_rq2_answers  # the importer contract (analysis.model_answer_import._family_cells)
