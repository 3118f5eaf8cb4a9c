"""Tang et al. RQ2's item design, shared by its item generator (families/tang/design_rq2.py) and its consistency
metrics (families/tang/metrics/consistency.py): the letters, the two choice sets, the confidence points, the
intervals and the ground-truth letter of a share. numpy only (no Django): the metrics stay pure, and the design
imports nothing from the metrics. The ranges are in metrics/consistency.py's docstring.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

LETTERS = "ABCDE"
CHOICE_SETS: dict[int, tuple[str, ...]] = {
    5: ("is almost certainly", "is likely to be", "is maybe", "is unlikely to be", "is almost certainly not"),
    3: ("is likely to be", "is maybe", "is unlikely to be"),
}
CONFIDENCES: tuple[float, ...] = (0.05, 0.275, 0.5, 0.725, 0.95)
INTERVALS: tuple[str, ...] = ("below_low", "above_low", "between", "outside", "below_high", "above_high")


def truth_choice(share: ArrayLike, choices: ArrayLike | int) -> NDArray[np.object_]:
    """Ground-truth letter(s) for share(s) of the sample inside the interval; ValueError for a share outside
    [0, 1] or a set of other than 5 or 3 choices."""
    s = np.atleast_1d(np.asarray(share, dtype=float))
    n = np.broadcast_to(np.asarray(choices, dtype=int), s.shape)
    if np.any((s < 0) | (s > 1) | np.isnan(s)):
        raise ValueError("a share inside the interval must be between 0 and 1")
    if not np.isin(n, list(CHOICE_SETS)).all():
        raise ValueError(f"choice sets have 5 or 3 choices, not {sorted(set(n.tolist()) - set(CHOICE_SETS))}")
    five = np.select([s > 0.92, s > 0.61, s > 0.41, s > 0.13], ["A", "B", "C", "D"], "E")
    three = np.select([s > 0.61, s >= 0.41], ["A", "B"], "C")
    return np.where(n == 5, five, three).astype(object)
