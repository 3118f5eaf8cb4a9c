"""python manage.py reproduce FILE.zip [--rerun-models --endpoint NAME]"""
from django.core.management.base import BaseCommand, CommandError

from access.cli import acting_user, add_as_argument, scoped
from analysis.replication.manifest import ManifestError
from analysis.replication.reproduce import ScratchFailed, diff_text, endpoint_spec, reproduce, rerun_text
from surveys.cli import lookup


class Command(BaseCommand):
    help = ("Check a replication package against its MANIFEST (a changed, missing or extra file is refused), "
            "load it into a fresh scratch SQLite database (never this site's database; a packaged reference study "
            "first), recompute the report and "
            "print its differences from the packaged one, table by table and figure by figure; exit status 1 "
            "when there are any. --rerun-models asks the stored prompts again of an endpoint.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("file", metavar="FILE.zip", help="the package (manage.py package)")
        parser.add_argument("--rerun-models", action="store_true",
                            help="ask every greedy and sampled run's stored prompts again, with the parameters "
                                 "each answer recorded, and print per run how far the new answers are")
        parser.add_argument("--endpoint", metavar="NAME", help="the endpoint to ask (with --rerun-models)")

    def handle(self, *args, **options):
        endpoint = None
        if options["rerun_models"] or options["endpoint"]:
            if not (options["rerun_models"] and options["endpoint"]):
                raise CommandError("--rerun-models and --endpoint NAME go together")
            from elicitation.models import ModelEndpoint

            found = lookup(scoped(ModelEndpoint.objects.all(), acting_user(options)), "name", options["endpoint"],
                           "endpoint")
            endpoint = endpoint_spec(found)
        try:
            result = reproduce(options["file"], endpoint)
        except ManifestError as exc:
            raise CommandError("refused, nothing loaded: the package does not match its MANIFEST\n"
                               + "\n".join(f"  {p}" for p in exc.problems)) from None
        except ScratchFailed as exc:
            raise CommandError(f"could not recompute the package: {exc}") from None
        self.stdout.write(diff_text(result))
        if result.rerun is not None:
            self.stdout.write(rerun_text(result.rerun))
        if result.differences:
            raise CommandError(f"the recomputed report differs from the packaged one ({result.differences} "
                               "difference(s))", returncode=1)
