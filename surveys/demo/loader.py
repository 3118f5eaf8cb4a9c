"""The demo studies written into the database (``manage.py load_demo``).

The installed families contribute their demos (config.registry, kind ``demos``: e.g. families/belem/demo.py,
``demo`` and ``demo-verifiable``, the shipped Belem definitions; families/sileo/demo.py, ``demo-sileo``), each a
shipped definition loaded like any definition file (surveys.definition.loader, ``manage.py load_study``) and made
live. They are loaded in the families' order, then the overprecision demo from ``studies/bahaj/study.toml``
(surveys/demo/overprecision.py), all or nothing. A demo whose study (same slug) exists is left untouched.
"""
from __future__ import annotations

from pathlib import Path

from django.db import transaction

from config import registry

from .outcome import LoadOutcome
from .overprecision import load_overprecision_demo

DEMO_DIR = Path(__file__).resolve().parent


def load_family_demos() -> list[LoadOutcome]:
    """The demos the installed families contribute (config.registry, kind ``demos``), in the families' order."""
    return [registry.get("demos", name)() for name in registry.names("demos")]


def load_demo() -> list[LoadOutcome]:
    """Create the demo studies that do not exist yet; existing ones (same slug) are left untouched."""
    with transaction.atomic():
        outcomes = load_family_demos()
        outcomes.append(LoadOutcome(*load_overprecision_demo()))
    return outcomes
