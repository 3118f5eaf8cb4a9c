"""python manage.py export <study> --format csv|parquet --out FILE [--raw-ids] [--include-test]"""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from access.cli import acting_user, add_as_argument, may_see_raw_ids
from analysis.exports import FORMATS, export_study
from surveys.cli import get_study


class Command(BaseCommand):
    help = ("Write the combined export of a study: humans and models in one long table, one row per answer "
            "(SPEC §7), streamed to a CSV or Parquet file. Participant ids are salted hashes unless --raw-ids.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("study", help="slug of the study")
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--out", required=True, metavar="FILE", help="output file")
        parser.add_argument("--raw-ids", action="store_true",
                            help="write the PROLIFIC_PIDs instead of their salted hashes")
        parser.add_argument("--include-test", action="store_true",
                            help="also write test participants' answers (respondent_type 'test'; left out by default)")

    def handle(self, *args, **options):
        user = acting_user(options)
        study = get_study(options["study"], user)
        if options["raw_ids"] and not may_see_raw_ids(user):
            raise CommandError(f"--raw-ids: {user} may not view participants (surveys.view_participant)")
        out = Path(options["out"])
        if not out.parent.exists():
            raise CommandError(f"no such folder: {out.parent}")
        rows = export_study(study, options["format"], out, raw_ids=options["raw_ids"],
                            include_test=options["include_test"])
        ids = "raw PROLIFIC_PIDs" if options["raw_ids"] else "hashed participant ids"
        self.stdout.write(self.style.SUCCESS(f"wrote {rows} rows ({ids}) to {out}"))
