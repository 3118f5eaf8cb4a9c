"""Small helpers that read typed values from the environment."""
from __future__ import annotations

import os

_READ: set[str] = set()  # every name read through these helpers (elicitation.key_env never sends one)


def env_str(name: str, default: str = "") -> str:
    """The variable's value, or ``default`` when it is unset or empty."""
    _READ.add(name)
    value = os.environ.get(name, "")
    return value if value != "" else default


def env_bool(name: str, default: bool = False) -> bool:
    """True for 1/true/yes/on (any case), False for 0/false/no/off; ``default`` when unset."""
    _READ.add(name)
    value = os.environ.get(name, "").strip().lower()
    if value == "":
        return default
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ValueError(f"{name}={value!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    """A comma-separated variable as a list with blanks dropped."""
    _READ.add(name)
    value = os.environ.get(name, "")
    if value.strip() == "":
        return list(default or [])
    return [part.strip() for part in value.split(",") if part.strip()]


def env_int(name: str, default: int) -> int:
    """An integer variable; ``default`` when unset."""
    _READ.add(name)
    value = os.environ.get(name, "").strip()
    return int(value) if value else default



def names_read() -> set[str]:
    """The name of every variable read through these helpers so far (the platform's own settings)."""
    return set(_READ)
