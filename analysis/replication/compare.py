"""Two reports compared value by value: the packaged one and the one recomputed from the package's data.

Numbers agree when ``|a - b| <= max(ABS_TOL, REL_TOL * max(|a|, |b|))``; texts, booleans and nulls must be equal.
Tables are compared row by row and column by column (report.json's ``tables``), figures by the numbers they draw
(``report/figures/<name>.json``), the meta by key; ``generated_at`` (when the report was built) is not compared.
"""
from __future__ import annotations

import json
import re
from typing import Any

REL_TOL = 1e-9
ABS_TOL = 1e-12
TOLERANCE = f"numbers equal within rel {REL_TOL:g} or abs {ABS_TOL:g}"
IGNORED_KEYS = frozenset({"generated_at"})


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def differences(packaged: Any, recomputed: Any, path: str = "") -> list[str]:
    """Each place where the two values differ, as ``path: packaged …, recomputed …``."""
    if _number(packaged) and _number(recomputed):
        if abs(packaged - recomputed) <= max(ABS_TOL, REL_TOL * max(abs(packaged), abs(recomputed))):
            return []
        return [f"{path}: packaged {packaged!r}, recomputed {recomputed!r}"]
    if isinstance(packaged, dict) and isinstance(recomputed, dict):
        out = []
        for key in list(dict.fromkeys([*packaged, *recomputed])):
            if key in IGNORED_KEYS:
                continue
            where = f"{path}.{key}" if path else str(key)
            if key not in recomputed:
                out.append(f"{where}: in the package only")
            elif key not in packaged:
                out.append(f"{where}: recomputed only")
            else:
                out += differences(packaged[key], recomputed[key], where)
        return out
    if isinstance(packaged, list) and isinstance(recomputed, list):
        out = [f"{path}: {len(packaged)} entries packaged, {len(recomputed)} recomputed"] \
            if len(packaged) != len(recomputed) else []
        for i, (a, b) in enumerate(zip(packaged, recomputed)):
            out += differences(a, b, f"{path}[{i}]")
        return out
    if packaged != recomputed or type(packaged) is not type(recomputed):  # numbers were compared above
        return [f"{path}: packaged {packaged!r}, recomputed {recomputed!r}"]
    return []


def report_diff(packaged: dict[str, bytes], recomputed: dict[str, bytes]) -> dict[str, list[str]]:
    """Section title (``meta``, ``table <name>``, ``figure <name>``, ``files``) → its differences, for every
    section; the report's files as the package and the recomputation give them (``report/…`` names)."""
    old = json.loads(packaged["report/report.json"])
    new = json.loads(recomputed["report/report.json"])
    out: dict[str, list[str]] = {"meta": differences(old.get("meta"), new.get("meta"), "meta")}
    tables = list(dict.fromkeys([*old.get("tables", {}), *new.get("tables", {})]))
    for name in tables:
        if name not in new.get("tables", {}):
            out[f"table {name}"] = ["in the package only"]
        elif name not in old.get("tables", {}):
            out[f"table {name}"] = ["recomputed only"]
        else:
            out[f"table {name}"] = [re.sub(r"^\[(\d+)\]\.", r"row \1, ", d)
                                    for d in differences(old["tables"][name], new["tables"][name])]
    figures = sorted({n for n in [*packaged, *recomputed] if n.startswith("report/figures/") and n.endswith(".json")})
    for name in figures:
        title = f"figure {name.removeprefix('report/figures/').removesuffix('.json')}"
        if name not in recomputed:
            out[title] = ["in the package only"]
        elif name not in packaged:
            out[title] = ["recomputed only"]
        else:
            out[title] = differences(json.loads(packaged[name]), json.loads(recomputed[name]))
    csvs = {n for n in packaged if n.startswith("report/") and n.endswith(".csv")}
    new_csvs = {n for n in recomputed if n.startswith("report/") and n.endswith(".csv")}
    out["files"] = [f"{n}: in the package only" for n in sorted(csvs - new_csvs)] + \
                   [f"{n}: recomputed only" for n in sorted(new_csvs - csvs)]
    return out
