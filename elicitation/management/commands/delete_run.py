"""python manage.py delete_run <run id>"""
from django.core.management.base import BaseCommand, CommandError

from elicitation.models import ElicitationRun
from elicitation.run_deletion import RunBusy, delete_run


class Command(BaseCommand):
    help = ("Delete a model run and all its answers (e.g. an imported run to import again with other settings). "
            "Refused while the run is running or a worker holds one of its requests, and while a "
            "self-refinement run shows its answers.")

    def add_arguments(self, parser):
        parser.add_argument("run", type=int, help="the run's id (as the admin, the report's runs table and "
                                                  "import_model_answers show it)")

    def handle(self, *args, **options):
        try:
            deleted = delete_run(options["run"])
        except ElicitationRun.DoesNotExist:
            raise CommandError(f"no run {options['run']}") from None
        except RunBusy as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(self.style.SUCCESS(f"deleted run {deleted.run_id} of {deleted.study} ({deleted.name}) "
                                             f"and its {deleted.responses} responses"))
