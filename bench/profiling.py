"""Where a profiled run's time goes, by part: shared by the benches' ``--profile`` (bench/elicitation.py,
bench/participants.py)."""
from __future__ import annotations

from collections import Counter
from typing import Callable

Func = tuple[str, int, str]  # (file, line, name) of a function in a cProfile profile
UNATTRIBUTED = "unattributed (no categorised caller)"


def fold(stats: dict[Func, tuple], label: Callable[[Func], str | None]) -> Counter:
    """Seconds of a profile by label, each function's own time (tottime) counted once: under its own label, or
    (no label) split among its callers in proportion to the time it spent for each, and so on up the callers
    (recursion included: the absorbing probabilities of that walk, solved as one linear system)."""
    import numpy as np

    funcs = list(stats)
    index = {func: i for i, func in enumerate(funcs)}
    names = sorted({name for func in funcs if (name := label(func))} | {UNATTRIBUTED})
    column = {name: j for j, name in enumerate(names)}
    up, absorbed = np.zeros((len(funcs), len(funcs))), np.zeros((len(funcs), len(names)))
    for func, i in index.items():
        weights = _caller_weights(stats[func][4], index)
        if (name := label(func)) or not weights:
            absorbed[i, column[name or UNATTRIBUTED]] = 1.0
            continue
        total = sum(weights.values())
        for caller, weight in weights.items():
            up[i, index[caller]] = weight / total
    # a leak of 1e-9 per step keeps the system regular when some callers form a cycle with no way out
    shares = np.linalg.solve(np.eye(len(funcs)) - up * (1 - 1e-9), absorbed)
    shares[:, column[UNATTRIBUTED]] += np.clip(1 - shares.sum(axis=1), 0, None)
    seconds = np.array([stats[func][2] for func in funcs]) @ shares
    return Counter(dict(zip(names, seconds.tolist())))


def _caller_weights(callers: dict[Func, tuple], known: dict[Func, int]) -> dict[Func, float]:
    """A function's callers, weighted by its own time spent for each (by calls when too quick to time)."""
    callers = {caller: entry for caller, entry in callers.items() if caller in known}
    weights = {caller: entry[2] for caller, entry in callers.items()}
    return weights if sum(weights.values()) else {caller: entry[0] for caller, entry in callers.items()}
