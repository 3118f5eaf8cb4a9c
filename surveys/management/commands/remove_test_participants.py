"""python manage.py remove_test_participants <study> [--yes]"""
import getpass

from django.core.management.base import BaseCommand

from access.cli import add_as_argument, acting_user
from surveys.cli import get_study
from surveys.models import Participant
from surveys.withdrawal import remove_test_participants


class Command(BaseCommand):
    help = ("Delete a study's test participants (entered through a test link) with their answers; each removal "
            "is recorded. Without --yes, only counts them.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("study", help="slug of the study")
        parser.add_argument("--yes", action="store_true", help="delete (otherwise a dry run)")

    def handle(self, *args, **options):
        study = get_study(options["study"], acting_user(options))
        tests = Participant.objects.filter(study=study, is_test=True)
        if not options["yes"]:
            answers = sum(p.responses.count() for p in tests)
            self.stdout.write(f"{study.slug} has {tests.count()} test participant(s) with {answers} answers. "
                              "Add --yes to delete them.")
            return
        records = remove_test_participants(tests, by=f"shell:{getpass.getuser()}")
        answers = sum(r.responses_deleted for r in records)
        self.stdout.write(self.style.SUCCESS(f"removed {len(records)} test participant(s) and {answers} answers "
                                             f"from {study.slug}"))
