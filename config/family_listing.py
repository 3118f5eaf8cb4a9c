"""What ``manage.py families`` shows: each installed family, where it came from and what it contributes."""
from __future__ import annotations

from typing import Any

from config.registry import KINDS, Contribution, Registry, resolve


def families_data(reg: Registry) -> list[dict[str, Any]]:
    """One dict per installed family: name, summary, origin (entry point, distribution, version, module) and its
    contributions by kind (name → reference)."""
    out = []
    for family, origin in reg.families.values():
        out.append({"name": family.name, "summary": family.summary, "distribution": origin.distribution,
                    "version": origin.version, "module": origin.module, "entry_point": origin.entry_point,
                    "contributes": {kind: {name: c.describe() for name, c in reg.entries(kind).items()
                                           if c.family == family.name} for kind in KINDS},
                    "instrument_hooks": {name: _hooks(c) for name, c in reg.entries("instruments").items()
                                         if c.family == family.name}})
    return out


def _hooks(contribution: Contribution) -> dict[str, str]:
    """The hooks an item kind sets that the core reads (its ``hooks()``: report sections, attention filter,
    refinement, ...); none for a contribution that does not say. Resolved here, not through ``Registry.get``,
    which keeps what the core prepared from it (an instance)."""
    hooks = getattr(resolve(contribution.ref, f"family {contribution.family!r}, instrument {contribution.name!r}"),
                    "hooks", None)
    return dict(hooks()) if callable(hooks) else {}


def families_text(reg: Registry) -> str:
    """The families as the command prints them: a heading per family, then one line per kind it contributes."""
    lines = []
    for data in families_data(reg):
        lines.append(f"{data['name']}: {data['summary']}" if data["summary"] else data["name"])
        lines.append(f"  from: {data['distribution']} {data['version']}, module {data['module']} "
                     f"(entry point {data['entry_point']})")
        for kind, names in data["contributes"].items():
            if names:
                lines.append(f"  {kind.replace('_', ' ')}: {', '.join(names)}")
        for name, hooks in data["instrument_hooks"].items():
            lines += [f"  {name} {hook}: {value}" for hook, value in hooks.items()]
    return "\n".join(lines)
