"""python manage.py attention <study>: run the Spearman attention filter and store its decisions."""
from django.core.management.base import BaseCommand, CommandError

from access.cli import acting_user, add_as_argument, may_see_raw_ids
from analysis.filtering import FilterError, apply_attention_filter
from surveys.cli import get_study


class Command(BaseCommand):
    help = ("Compute each completed participant's Spearman ρ (SPEC §6), store it with the decision "
            "(ρ > the study's attention threshold) and list the excluded participants. Nobody is deleted.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("study", help="slug of the study")

    def handle(self, *args, **options):
        user = acting_user(options)
        study = get_study(options["study"], user)
        try:
            result = apply_attention_filter(study)
        except FilterError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"ranking from study {result.ranking_study} (highest mean first): "
                          + ", ".join(f"{r['label']} {r['mean']:.1f}" for r in result.ranking))
        self.stdout.write(self.style.SUCCESS(
            f"{study.slug}: {result.included} of {result.evaluated} completed participants kept "
            f"(ρ > {result.threshold:g}); {len(result.excluded)} excluded"))
        for e in result.excluded:
            rho = "undefined" if e.rho is None else f"{e.rho:.3f}"
            who = e.prolific_pid if may_see_raw_ids(user) else e.respondent_id
            self.stdout.write(f"  excluded {who}: ρ = {rho} over {e.n_answers} answers")
