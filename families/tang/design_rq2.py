"""Tang et al. RQ2: choosing a WEP for the chance that one more observation falls in an interval.

360 items (the paper's Methods, Fig. 7): 3 scenarios (height, score, sound) × 2 CHOICES sets (5 and 3 WEP
phrases) × 2 NUMBERS sets (20 numbers drawn from N(100, 10), "narrow", and from N(100, 40), "wide") × 5
confidence points (0.05, 0.275, 0.5, 0.725, 0.95) × 6 intervals (below low, above low, between low and high,
below low or above high, below high, above high). low and high are the ends of the central interval of the
set's N(μ, σ) at the confidence point — the (1 − c)/2 and (1 + c)/2 quantiles — truncated to integers
(N(100, 10) at 0.05 → 99 and 100; N(100, 40) at 0.95 → 21 and 178).

Physical quantities (:data:`SCENARIO_MIN`): a height is positive, and an exam score or a loudness in decibels is
not negative, yet N(100, 40) draws one value below 0 in about 600 (seed 1 draws -8). A drawn sample keeps every
valid value in place and redraws each invalid one from the same N(μ, σ) until it is valid (a normal truncated
at the scenario's floor), with a generator seeded by the seed and the scenario: a scenario whose numbers are
all valid keeps the draw of earlier versions exactly (the default seed's draws are all valid). Numbers given
by the researcher are never redrawn: a value below a scenario's floor is clipped to it for that scenario (its
share and truth are unchanged: every interval end is above the floors), and ``extra["clipped"]`` lists the
values given. Each scenario can therefore show different numbers; ``extra["sample"]`` holds the scenario's.

Each item keeps in ``extra``: scenario, choices (5/3), numbers ("narrow"/"wide"), mu, sigma, sample (the 20
numbers), confidence, interval, low, high, share (the part of the sample strictly inside the interval),
truth_choice (the ground-truth letter by the paper's ranges, :func:`families.tang.rq2_items.truth_choice`)
and seed; ``ground_truth`` = share. Key: ``scenario|choices|numbers|confidence|interval``, e.g.
``height|5|narrow|0.500|between``. The item's ``statement`` is the scenario sentence with its blank
(:func:`rq2_scenario`) and ``extra["options"]`` its choices as [letter, phrase]; the WEP-choice instrument
(families/tang/wep_choice.py) words the page and the standard/CoT prompts around them from the study's
definition (the shipped one: studies/tang-rq2/study.toml).
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from families.tang.rq2_items import CHOICE_SETS, CONFIDENCES, INTERVALS, LETTERS, truth_choice
from surveys.designs import DesignError

SCENARIOS: tuple[str, ...] = ("height", "score", "sound")
# The smallest number each scenario's quantity allows: a height above 0 (integers: 1), a score or a loudness
# in decibels not below 0.
SCENARIO_MIN: dict[str, int] = {"height": 1, "score": 0, "sound": 0}
QUANTITY: dict[str, str] = {"height": "height", "score": "score", "sound": "loudness in decibels"}
NUMBER_SETS: dict[str, tuple[float, float]] = {"narrow": (100.0, 10.0), "wide": (100.0, 40.0)}
CHOICE_ORDER: tuple[int, ...] = (5, 3)
SAMPLE_SIZE = 20
DEFAULT_SEED = 20240613
# The paper's first (narrow) set, as printed in its Results and Fig. 7.
PAPER_NARROW = (116, 93, 94, 89, 108, 76, 117, 92, 103, 97, 114, 79, 96, 96, 111, 89, 98, 91, 100, 105)
# The wide set the authors used: not printed in the paper; recovered from their chain-of-thought answers
# (rq2_cot_result.txt, the N(100, 40) prompts list the sample back).
PAPER_WIDE = (55, 145, 136, 120, 136, 72, 95, 62, 89, 121, 72, 84, 72, 66, 73, 99, 55, 109, 166, 129)
PAPER = "paper"  # ``numbers="paper"``: the two sets above

# Scenario sentences: {n} sample size, {numbers} the sample, then the sentence to complete ("_" = the choice).
SCENARIO_TEXT: dict[str, str] = {
    "height": ("I randomly picked {n} specimens from an unknown population. I recorded their heights, which are "
               "{numbers}. Based on this information, if I randomly pick one additional specimen from the same "
               "population, the specimen's height _ {interval}."),
    "score": ("I randomly picked {n} students who took the same exam. I recorded their scores, which are {numbers}. "
              "Based on this information, if I randomly pick one additional student who took the exam, the "
              "student's score _ {interval}."),
    "sound": ("I randomly recorded {n} sounds from the same unknown source. I measured their loudness in decibels, "
              "which are {numbers}. Based on this information, if I randomly record one additional sound from the "
              "same source, the sound's loudness _ {interval}."),
}
INTERVAL_TEXT: dict[str, str] = {
    "below_low": "below {low}",
    "above_low": "above {low}",
    "between": "between {low} and {high}",
    "outside": "below {low} or above {high}",
    "below_high": "below {high}",
    "above_high": "above {high}",
}
def interval_bounds(confidence: float, mu: float, sigma: float) -> tuple[int, int]:
    """(low, high): the central ``confidence`` interval of N(mu, sigma), each end truncated to an integer."""
    half = stats.norm.ppf(0.5 + confidence / 2) * sigma
    return math.trunc(mu - half), math.trunc(mu + half)


def inside(sample: Sequence[float], interval: str, low: float, high: float) -> np.ndarray:
    """Which numbers of ``sample`` lie strictly inside the interval (a number equal to an end is outside)."""
    x = np.asarray(sample, dtype=float)
    return {
        "below_low": x < low,
        "above_low": x > low,
        "between": (x > low) & (x < high),
        "outside": (x < low) | (x > high),
        "below_high": x < high,
        "above_high": x > high,
    }[interval]


def draw_numbers(seed: int | None = None, size: int = SAMPLE_SIZE) -> dict[str, list[int]]:
    """One sample per NUMBERS set from its N(μ, σ), rounded to integers (numpy default_rng(seed))."""
    rng = np.random.default_rng(DEFAULT_SEED if seed is None else seed)
    return {name: [int(v) for v in np.rint(rng.normal(mu, sigma, size))] for name, (mu, sigma) in NUMBER_SETS.items()}


def redraw_invalid(sample: Sequence[int], scenario: str, mu: float, sigma: float, seed: int,
                   name: str) -> list[int]:
    """``sample`` with each value below the scenario's floor redrawn from N(mu, sigma), rounded, until it is
    valid (valid values stay in place); the generator is seeded by ``seed``, the scenario and the set's
    ``name``, so the same options give the same items."""
    floor = SCENARIO_MIN[scenario]
    if all(v >= floor for v in sample):
        return list(sample)
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario), list(NUMBER_SETS).index(name)])
    out = []
    for value in sample:
        while value < floor:
            value = int(np.rint(rng.normal(mu, sigma)))
        out.append(value)
    return out


def scenario_numbers(sets: Mapping[str, list[float]], scenario: str, drawn_with: int | None
                     ) -> dict[str, tuple[list[float], list[float] | None]]:
    """Per NUMBERS set: (the scenario's sample, the given values when some were clipped, else None). Drawn
    sets (``drawn_with`` = their seed) are redrawn where invalid, given sets clipped (module docstring)."""
    floor, out = SCENARIO_MIN[scenario], {}
    for name, sample in sets.items():
        if drawn_with is not None:
            mu, sigma = NUMBER_SETS[name]
            out[name] = (redraw_invalid(sample, scenario, mu, sigma, drawn_with, name), None)
        elif any(v < floor for v in sample):
            out[name] = ([max(v, floor) for v in sample], list(sample))
        else:
            out[name] = (list(sample), None)
    return out


def read_numbers(path: str | Path) -> dict[str, list[float]]:
    """The two NUMBERS sets from a file, for the command line only (``generate_items --numbers FILE``): the API
    and the admin pass the sets as values, never a server path. See :func:`parse_numbers`."""
    return parse_numbers(Path(path).read_text(encoding="utf-8"), str(path))


def command_line(numbers: Any = None, **options: Any) -> dict[str, Any]:
    """``generate_items``' options with ``--numbers`` as this design takes it: ``paper`` (the authors' sets) stays
    a value, any other text names a file of the two sets, read here (:func:`read_numbers`)."""
    if isinstance(numbers, str) and numbers:
        numbers = PAPER if numbers.strip().lower() == PAPER else read_numbers(numbers)
    return {**options, "numbers": numbers or None}


def parse_numbers(text: str, source: str = "numbers") -> dict[str, list[float]]:
    """The two NUMBERS sets from text: two non-empty lines (narrow, then wide), numbers separated by commas
    and/or spaces; lines starting with # are ignored. DesignError names the line at fault."""
    lines = [(i, line.strip()) for i, line in enumerate(text.splitlines(), start=1)
             if line.strip() and not line.lstrip().startswith("#")]
    if len(lines) != 2:
        raise DesignError(f"{source}: expected two lines of numbers (narrow, then wide), found {len(lines)}")
    return dict(zip(NUMBER_SETS, (_parse_line(text, f"{source}, line {i}") for i, text in lines)))


def _parse_line(text: str, where: str) -> list[float]:
    values = []
    for token in (t for t in re.split(r"[,\s;]+", text) if t):
        try:
            value = float(token)
        except ValueError:
            raise DesignError(f"{where}: {token!r} is not a number") from None
        if not math.isfinite(value):
            raise DesignError(f"{where}: {token!r} is not a finite number")
        values.append(int(value) if value == int(value) else value)
    if len(values) < 2:
        raise DesignError(f"{where}: a sample needs at least 2 numbers, found {len(values)}")
    return values


def _numbers(numbers: Any, seed: int | None) -> dict[str, list[float]]:
    if numbers is None:
        return draw_numbers(seed)
    if isinstance(numbers, str) and numbers.strip().lower() == PAPER:
        return {"narrow": list(PAPER_NARROW), "wide": list(PAPER_WIDE)}
    if isinstance(numbers, (str, bytes, Path)):
        # A value, never a file name: an option from the API could otherwise read any server file.
        raise DesignError("numbers: give the two NUMBERS sets as values, [[narrow…], [wide…]] or "
                          '{"narrow": […], "wide": […]}, or "paper" for the authors\' sets; a file is read only by '
                          "the command line (manage.py generate_items --numbers FILE)")
    if isinstance(numbers, Mapping):
        sets = {name: list(numbers[name]) for name in NUMBER_SETS if name in numbers}
    else:
        sets = dict(zip(NUMBER_SETS, (list(s) for s in numbers)))
    if set(sets) != set(NUMBER_SETS):
        raise DesignError(f"give two NUMBERS sets ({', '.join(NUMBER_SETS)})")
    return {k: _parse_line(" ".join(map(str, v)), f"NUMBERS set {k}") for k, v in sets.items()}


def _fmt(value: float) -> str:
    return f"{value:g}"


def choices_text(choices: int) -> str:
    """The choices as the paper writes them: "A.is almost certainly B.is likely to be …"."""
    return " ".join(f"{LETTERS[i]}.{phrase}" for i, phrase in enumerate(CHOICE_SETS[int(choices)]))


def rq2_options(extra: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(letter, phrase) of the item's choice set, most probable first."""
    return [(LETTERS[i], phrase) for i, phrase in enumerate(CHOICE_SETS[int(extra["choices"])])]


def rq2_scenario(extra: Mapping[str, Any]) -> str:
    """The scenario sentences with the sample and the interval, "_" where the choice goes."""
    template = SCENARIO_TEXT[extra["scenario"]]
    interval = INTERVAL_TEXT[extra["interval"]].format(low=_fmt(extra["low"]), high=_fmt(extra["high"]))
    return template.format(n=len(extra["sample"]), numbers=", ".join(_fmt(v) for v in extra["sample"]),
                           interval=interval)


def item_key(extra: Mapping[str, Any]) -> str:
    """``scenario|choices|numbers|confidence|interval``, e.g. ``height|5|narrow|0.500|between``."""
    return f"{extra['scenario']}|{extra['choices']}|{extra['numbers']}|{extra['confidence']:.3f}|{extra['interval']}"


def report_defaults(numbers: Any = None, **_: Any) -> dict[str, str]:
    """The paper's replication (``numbers="paper"``) reads answers the authors' way (report option
    ``reading``, families/tang/metrics/reading.py); other studies keep the Methods' reading."""
    return {"reading": "authors"} if isinstance(numbers, str) and numbers.strip().lower() == PAPER else {}


def notes(items: Sequence[Any]) -> list[str]:
    """One line per scenario and NUMBERS set whose numbers were redrawn or clipped to the scenario's floor
    (``items``: Item objects or field dicts of one generation)."""
    lines, seen = [], set()
    for item in items:
        extra = item["extra"] if isinstance(item, Mapping) else item.extra
        key = (extra["scenario"], extra["numbers"])
        if key in seen:
            continue
        seen.add(key)
        floor = SCENARIO_MIN[extra["scenario"]]
        if "clipped" in extra:
            low = [v for v in extra["clipped"] if v < floor]
            lines.append(f"{extra['scenario']}, {extra['numbers']} numbers: {', '.join(map(_fmt, low))} clipped to "
                         f"{floor} (a {QUANTITY[extra['scenario']]} below {floor} is not possible)")
        elif extra["seed"] is not None:
            drawn = draw_numbers(extra["seed"])[extra["numbers"]]
            changed = [(d, v) for d, v in zip(drawn, extra["sample"]) if d != v]
            if changed:
                lines.append(f"{extra['scenario']}, {extra['numbers']} numbers: "
                             f"{', '.join(f'{_fmt(d)} redrawn as {_fmt(v)}' for d, v in changed)} "
                             f"(a {QUANTITY[extra['scenario']]} below {floor} is not possible)")
    return lines


def generate(study: Any = None, seed: int | None = None, numbers: Any = None) -> list[dict[str, Any]]:
    """The 360 item field dicts. ``numbers``: the two NUMBERS sets (narrow, wide) as a pair of sequences, a
    mapping {"narrow": …, "wide": …}, or ``"paper"`` for the authors' sets (:data:`PAPER_NARROW`,
    :data:`PAPER_WIDE`) — values only: a file is read by the command line, :func:`read_numbers`; by default drawn
    with ``seed``. Values a scenario's quantity does not allow are redrawn (drawn sets) or clipped (given sets)."""
    sets = _numbers(numbers, seed)
    used_seed = None if numbers is not None else (DEFAULT_SEED if seed is None else seed)
    items = []
    for scenario in SCENARIOS:
        numbers_of = scenario_numbers(sets, scenario, used_seed)
        for choices in CHOICE_ORDER:
            for name, (mu, sigma) in NUMBER_SETS.items():
                sample, given = numbers_of[name]
                for confidence in CONFIDENCES:
                    low, high = interval_bounds(confidence, mu, sigma)
                    for interval in INTERVALS:
                        share = float(inside(sample, interval, low, high).mean())
                        extra = {"scenario": scenario, "choices": choices, "numbers": name, "mu": mu, "sigma": sigma,
                                 "sample": sample, "confidence": confidence, "interval": interval,
                                 "low": low, "high": high, "share": share,
                                 "truth_choice": str(truth_choice(share, choices)[0]), "seed": used_seed}
                        if given is not None:
                            extra["clipped"] = given
                        extra["options"] = [list(option) for option in rq2_options(extra)]
                        items.append({"key": item_key(extra), "context": scenario, "statement_id": item_key(extra),
                                      "statement": rq2_scenario(extra), "language": "en", "ground_truth": share,
                                      "extra": extra})
    return items
