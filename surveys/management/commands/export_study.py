"""python manage.py export_study SLUG [--out DIR]"""
from pathlib import Path

from django.core.management.base import BaseCommand

from access.cli import acting_user, add_as_argument
from surveys.cli import get_study
from surveys.definition.export import export_to


class Command(BaseCommand):
    help = "Write a study's definition file (study.toml) and its items (items.jsonl), ready for load_study."

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("slug")
        parser.add_argument("--out", help="folder to write into (default: ./SLUG)")

    def handle(self, *args, **options):
        study = get_study(options["slug"], acting_user(options))
        for path in export_to(study, Path(options["out"] or study.slug)):
            self.stdout.write(f"wrote {path}")
