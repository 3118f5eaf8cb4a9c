"""python manage.py package SLUG --out FILE.zip [--pool-versions]"""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from access.cli import acting_user, add_as_argument
from analysis.replication.archive import sha256_hex
from analysis.replication.package import package_zip
from analysis.reports import ReportError
from analysis.versions import VersionsError
from surveys.cli import get_study


class Command(BaseCommand):
    help = ("Write a study's replication package: its definition and items, every stored prompt its model answers "
            "used, the human answers (salted participant ids only), the runs and model answers, the report "
            "(JSON, CSVs, figures and the numbers behind each figure), the platform version and the installed "
            "dependencies, with a MANIFEST of SHA-256 hashes; a study reported with a reference study carries that "
            "study's definition and data too (reference/SLUG/). Prints the zip's SHA-256 (publish it with the package); "
            "check it with `manage.py reproduce --expect-sha256`.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("slug", help="slug of the study")
        parser.add_argument("--out", required=True, metavar="FILE.zip", help="the zip file to write")
        parser.add_argument("--pool-versions", action="store_true",
                            help="report answers given to several versions of the definition together")

    def handle(self, *args, **options):
        user = acting_user(options)
        study = get_study(options["slug"], user)
        try:
            data = package_zip(study, pool_versions=options["pool_versions"], user=user)
        except (ReportError, VersionsError) as exc:
            raise CommandError(str(exc)) from None
        out = Path(options["out"])
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        self.stdout.write(self.style.SUCCESS(f"wrote {out} ({len(data)} bytes, SHA-256 {sha256_hex(data)})"))
        self.stdout.write("Cite this SHA-256 with the package; `reproduce --expect-sha256` checks it.")
