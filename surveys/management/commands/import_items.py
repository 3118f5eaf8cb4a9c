"""python manage.py import_items <study-slug> <file.csv>"""
from django.core.management.base import BaseCommand, CommandError

from access.cli import add_as_argument, acting_user
from surveys.cli import get_study
from surveys.importers import ImportFailed, import_items


class Command(BaseCommand):
    help = "Import items from a CSV file (the kind's columns: manage.py item_template KIND). All or nothing."

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("study", help="slug of an existing study")
        parser.add_argument("csv", help="path of the CSV file")

    def handle(self, *args, **options):
        study = get_study(options["study"], acting_user(options))
        try:
            result = import_items(study, options["csv"])
        except FileNotFoundError:
            raise CommandError(f"no such file: {options['csv']}") from None
        except ImportFailed as exc:
            raise CommandError(str(exc)) from None
        breakdown = result.breakdown()
        self.stdout.write(self.style.SUCCESS(
            f"imported {result.created} items into {study.slug}" + (f" ({breakdown})" if breakdown else "")
        ))
