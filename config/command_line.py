"""The ``hedgelab`` command an installed wheel provides: ``manage.py`` for an installation without a checkout
(``hedgelab migrate``, ``hedgelab load_study <study>``, ``hedgelab runserver``)."""
from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
