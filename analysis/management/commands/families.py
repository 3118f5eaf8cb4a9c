"""python manage.py families [--json]: the installed study families, where they came from and what they contribute."""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from config.family_listing import families_data, families_text
from config.registry import GROUP, FamilyError, registry


class Command(BaseCommand):
    help = (f"List the installed study families (Python entry points of the group {GROUP}): where each came from "
            "(distribution, version, module) and what it contributes (instruments, designs, readings, metrics, "
            "report sections, exclusion rules, importers).")

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print JSON instead of text")

    def handle(self, *args, **options):
        try:
            reg = registry()
        except FamilyError as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps(families_data(reg), indent=1, ensure_ascii=False))
        else:
            self.stdout.write(families_text(reg))
