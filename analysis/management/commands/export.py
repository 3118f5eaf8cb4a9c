"""python manage.py export <study> --format csv|parquet --out FILE [--raw-ids] [--include-test] [--no-codebook]"""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from access.cli import acting_user, add_as_argument, may_see_raw_ids
from analysis.codebook import CODEBOOK_FORMATS, codebook_text
from analysis.exports import FORMATS, export_study, study_layout
from surveys.cli import get_study


def codebook_paths(out: Path) -> dict[str, Path]:
    """Where the codebook goes beside the export ``out``: ``<name>-codebook.csv``, ``.json`` and ``.md``."""
    return {fmt: out.with_name(f"{out.stem}-codebook.{fmt}") for fmt in CODEBOOK_FORMATS}


class Command(BaseCommand):
    help = ("Write the combined export of a study: humans and models in one long table, one row per answer "
            "(SPEC §7), streamed to a CSV or Parquet file, and beside it the codebook (every column with its "
            "type, source, meaning and allowed values) as FILE-codebook.csv, .json and .md. Participant ids are "
            "salted hashes unless --raw-ids.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("study", help="slug of the study")
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--out", required=True, metavar="FILE", help="output file")
        parser.add_argument("--raw-ids", action="store_true",
                            help="write the PROLIFIC_PIDs instead of their salted hashes")
        parser.add_argument("--include-test", action="store_true",
                            help="also write test participants' answers (respondent_type 'test'; left out by default)")
        parser.add_argument("--no-codebook", action="store_true",
                            help="write the data only, without the codebook files beside it")

    def handle(self, *args, **options):
        user = acting_user(options)
        study = get_study(options["study"], user)
        if options["raw_ids"] and not may_see_raw_ids(user):
            raise CommandError(f"--raw-ids: {user} may not view participants (surveys.view_participant)")
        out = Path(options["out"])
        if not out.parent.exists():
            raise CommandError(f"no such folder: {out.parent}")
        layout = study_layout(study)  # one layout for the data and its codebook
        rows = export_study(study, options["format"], out, raw_ids=options["raw_ids"],
                            include_test=options["include_test"], layout=layout)
        ids = "raw PROLIFIC_PIDs" if options["raw_ids"] else "hashed participant ids"
        self.stdout.write(self.style.SUCCESS(f"wrote {rows} rows ({ids}) to {out}"))
        if not options["no_codebook"]:
            paths = codebook_paths(out)
            for fmt, path in paths.items():
                path.write_text(codebook_text(study, fmt, layout), encoding="utf-8")
            self.stdout.write(self.style.SUCCESS(
                f"wrote the codebook ({len(layout.columns)} columns) to {', '.join(str(p) for p in paths.values())}"))
