"""The demo studies written into the database (``manage.py load_demo``).

The installed families contribute their demos (config.registry, kind ``demos``), each a shipped definition
loaded like any definition file (surveys.definition.loader, ``manage.py load_study``) and made live. They are
loaded in the families' order, all or nothing. A demo whose study (same slug) exists is left untouched.
"""
from __future__ import annotations

from pathlib import Path

from django.db import transaction

from config import registry

from .outcome import LoadOutcome

DEMO_DIR = Path(__file__).resolve().parent


def load_family_demos() -> list[LoadOutcome]:
    """The demos the installed families contribute (config.registry, kind ``demos``), in the families' order."""
    return [registry.get("demos", name)() for name in registry.names("demos")]


def load_demo() -> list[LoadOutcome]:
    """Create the demo studies that do not exist yet; existing ones (same slug) are left untouched."""
    with transaction.atomic():
        return load_family_demos()
