"""python manage.py import_responses <study> <csv> --participant COL (--statement COL | --text COL)
--expression COL --value COL [--truth COL] [--time COL [--time-unit ms|s]] [--question COL]"""
from django.core.management.base import BaseCommand, CommandError

from access.cli import add_as_argument, acting_user
from surveys.answer_import import ResponseColumns, import_responses
from surveys.cli import get_study
from surveys.importers import ImportFailed


class Command(BaseCommand):
    help = ("Import human answers in long format (one row per answer) from an earlier study. An item is found by "
            "--statement (statement id) or --text (its sentence or statement), with --expression and, where needed, "
            "--truth; when a row names several items the error says what they share and what tells them apart. "
            "All or nothing: any bad row is reported with its line and column and nothing is imported.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("study", help="slug of the study whose items the answers belong to")
        parser.add_argument("csv", help="path of the CSV file (UTF-8, header row)")
        parser.add_argument("--participant", required=True, metavar="COL", help="column with the participant id")
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--statement", metavar="COL", help="column with the statement id")
        which.add_argument("--text", metavar="COL",
                           help="column with the item's rendered text (the sentence as shown) or its bare statement, "
                                "instead of --statement. Use it when a statement id is shared by different "
                                "statements (some published files give two different statements one id): "
                                "the text tells those rows apart where the id cannot")
        parser.add_argument("--expression", metavar="COL",
                            help="column with the expression ('control' for control items); required unless "
                                 "the text identifies the item on its own")
        parser.add_argument("--value", required=True, metavar="COL",
                            help="column with the answer, read by the question's answer shape: a number on the "
                                 "scale, an option's key or text, the free text as written, [lower, upper]")
        parser.add_argument("--question", metavar="COL",
                            help="column with the key of the question each answer gives (a study with "
                                 "[[questions]]: required; a study with one question: leave it out)")
        parser.add_argument("--truth", metavar="COL",
                            help="column with true/false, where a statement id (or text) is shared by a true and a "
                                 "false item of the same statement")
        parser.add_argument("--time", metavar="COL", help="column with the time taken")
        parser.add_argument("--time-unit", choices=["ms", "s"], default="ms", help="unit of --time (default ms)")

    def handle(self, *args, **options):
        study = get_study(options["study"], acting_user(options))
        columns = ResponseColumns(participant=options["participant"], value=options["value"],
                                  expression=options["expression"], statement=options["statement"],
                                  text=options["text"], truth=options["truth"], time=options["time"],
                                  time_unit=options["time_unit"], question=options["question"])
        try:
            summary = import_responses(study, options["csv"], columns)
        except FileNotFoundError:
            raise CommandError(f"no such file: {options['csv']}") from None
        except ImportFailed as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(self.style.SUCCESS(f"{study.slug}: {summary}"))
