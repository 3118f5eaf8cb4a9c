"""Item kinds (instruments): each kind lives in its own module; the installed families contribute them.

A family names its kinds in its declaration (config.registry, kind ``instruments``: an ``Instrument`` subclass or
instance, by reference); :func:`get_instrument` and :func:`instrument_choices` look them up there. Adding a kind:
write a module with an ``Instrument`` subclass and name it in a family's ``instruments``.
"""
from __future__ import annotations

from config import registry

from .base import ImportRowError, Instrument, Prompt
from .shapes import Answer, AnswerError, AnswerShape, Option, ParsedAnswer


def _instance(name: str):
    def prepare(obj: object) -> Instrument:
        instrument = obj() if isinstance(obj, type) else obj
        if not isinstance(instrument, Instrument) or instrument.name != name:
            family = registry.registry().family_of("instruments", name)
            raise registry.FamilyError(f"instrument {name!r} of family {family!r} is not an Instrument named {name!r}")
        return instrument
    return prepare


def get_instrument(name: str) -> Instrument:
    """The installed instrument called ``name``; KeyError names the known ones."""
    try:
        return registry.get("instruments", name, _instance(name))
    except registry.UnknownName:
        raise KeyError(f"unknown instrument {name!r}; known: {', '.join(sorted(registry.names('instruments')))}"
                       ) from None


def instruments() -> list[Instrument]:
    """Every installed instrument, in the families' order."""
    return [get_instrument(name) for name in registry.names("instruments")]


def instrument_choices() -> list[tuple[str, str]]:
    """(name, label) pairs for model field choices."""
    return [(k.name, k.label) for k in instruments()]


__all__ = ["Answer", "AnswerError", "AnswerShape", "ImportRowError", "Instrument", "Option", "ParsedAnswer", "Prompt",
           "get_instrument", "instrument_choices", "instruments"]
