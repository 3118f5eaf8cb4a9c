"""python manage.py exclusions <study>: apply the study's exclusion rules and store the decisions."""
from django.core.management.base import BaseCommand, CommandError

from access.cli import acting_user, add_as_argument, may_see_raw_ids
from analysis.exclusion_report import lines
from analysis.exclusions import ExclusionError, apply_exclusions
from surveys.cli import get_study
from surveys.respondent_ids import hashed_id


class Command(BaseCommand):
    help = ("Apply the study's exclusion rules ([[exclusions]] in its file; the attention filter's rule of its kind "
            "when the filter applies) to every completed participant, store each decision with the rules that "
            "excluded them, and list them. Nobody is deleted.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("study", help="slug of the study")

    def handle(self, *args, **options):
        user = acting_user(options)
        study = get_study(options["study"], user)
        try:
            result = apply_exclusions(study)
        except ExclusionError as exc:
            raise CommandError(str(exc)) from None
        raw = may_see_raw_ids(user)
        for line in lines(result, lambda pk: result.pids[pk] if raw else hashed_id(result.pids[pk])):
            self.stdout.write(line)
