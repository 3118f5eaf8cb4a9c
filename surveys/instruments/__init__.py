"""Registry of item kinds. Each kind lives in its own module and registers itself here.

Adding a kind: write a module with an ``Instrument`` subclass and add it to ``_KINDS``.
"""
from __future__ import annotations

from .base import ImportRowError, Instrument, Prompt
from .shapes import Answer, AnswerError, AnswerShape, Option, ParsedAnswer
from .generic import GenericInstrument
from .interval_confidence import IntervalConfidence
from .speaker_belief import SpeakerBelief
from .verbalisation_choice import VerbalisationChoice
from .wep_choice import WepChoice
from .wep_probability import WepProbability

_KINDS: dict[str, Instrument] = {}


def register(instrument: Instrument) -> Instrument:
    """Add an instrument instance to the registry under its ``name``."""
    if instrument.name in _KINDS:
        raise ValueError(f"instrument {instrument.name!r} is already registered")
    _KINDS[instrument.name] = instrument
    return instrument


def get_instrument(name: str) -> Instrument:
    """The registered instrument called ``name``; KeyError names the known ones."""
    try:
        return _KINDS[name]
    except KeyError:
        raise KeyError(f"unknown instrument {name!r}; known: {', '.join(sorted(_KINDS))}") from None


def instrument_choices() -> list[tuple[str, str]]:
    """(name, label) pairs for model field choices."""
    return [(k.name, k.label) for k in _KINDS.values()]


register(SpeakerBelief())
register(WepProbability())
register(WepChoice())
register(IntervalConfidence())
register(VerbalisationChoice())
register(GenericInstrument())

__all__ = ["Answer", "AnswerError", "AnswerShape", "ImportRowError", "Instrument", "Option", "ParsedAnswer", "Prompt",
           "get_instrument", "instrument_choices", "register"]
