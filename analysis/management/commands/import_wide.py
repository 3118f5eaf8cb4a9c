"""python manage.py import_wide <study> <csv> [--id-column COL] [--id-prefix TEXT]"""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from access.cli import add_as_argument, acting_user
from surveys.answer_import import import_wide
from surveys.cli import get_study
from surveys.importers import ImportFailed


class Command(BaseCommand):
    help = ("Import a wide survey file (one row per respondent, one column per expression, e.g. the "
            "Fagen-Ulmschneider survey). Creates the study's items first when it has none (wep_probability "
            "instrument). All or nothing.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("study", help="slug of the study")
        parser.add_argument("csv", help="path of the CSV file (UTF-8, header row)")
        parser.add_argument("--id-column", metavar="COL", help="column with the respondent id (default: none)")
        parser.add_argument("--id-prefix", metavar="TEXT",
                            help="without --id-column, respondent ids are this prefix + the line number "
                                 "(default: the file name without extension and a dash)")

    def handle(self, *args, **options):
        study = get_study(options["study"], acting_user(options))
        path = Path(options["csv"])
        prefix = options["id_prefix"] if options["id_prefix"] is not None else f"{path.stem}-"
        try:
            summary = import_wide(study, path, id_column=options["id_column"], id_prefix=prefix)
        except FileNotFoundError:
            raise CommandError(f"no such file: {path}") from None
        except ImportFailed as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(self.style.SUCCESS(f"{study.slug}: {summary}"))
