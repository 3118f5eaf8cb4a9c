"""python manage.py report <study> [--out DIR] [--no-figures] [--pool-versions] [--option NAME=VALUE …]"""
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from access.cli import acting_user, add_as_argument, may_see_raw_ids
from access.ownership import may_see_reference
from analysis.report_cache import cached_report
from analysis.reports import ReportError
from surveys.cli import get_study
from surveys.report_options import option_errors, parse_options


def written_lines(written: list[Path]) -> list[str]:
    """Where each part of the report was written: report.json, every table (CSV), every figure (PNG and SVG)."""
    figures: dict[str, list[Path]] = {}
    lines = []
    for path in written:
        if path.suffix in (".png", ".svg"):
            figures.setdefault(path.stem, []).append(path)
        elif path.suffix == ".csv":
            lines.append(f"  table   {path.stem:<32} {path}")
        else:
            lines.insert(0, f"  report  {'(all tables and figure numbers)':<32} {path}")
    lines += [f"  figure  {name:<32} {', '.join(str(p) for p in paths)}" for name, paths in figures.items()]
    return lines


class Command(BaseCommand):
    help = ("Build a study's report (runs the attention filter first) and write report.json, one CSV per "
            "table and the figures as PNG and SVG. A verifiable study is reported with its reference study.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("study", help="slug of the study")
        parser.add_argument("--out", metavar="DIR", help="output folder (default: VAR_DIR/reports/<study>)")
        parser.add_argument("--no-figures", action="store_true", help="write JSON and CSV only")
        parser.add_argument("--pool-versions", action="store_true",
                            help="report answers given to different versions of the study's definition together "
                                 "(refused otherwise; the report then says it pooled them)")
        parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                            help="set a report option of the study and store it on the study (e.g. reading=authors "
                                 "for the authors' reading of WEP-choice answers; reading=text for the Methods'); "
                                 "repeat for several")

    def handle(self, *args, **options):
        user = acting_user(options)
        study = get_study(options["study"], user)
        if options["option"]:
            self.set_options(study, options["option"])
        out = Path(options["out"]) if options["out"] else Path(settings.VAR_DIR) / "reports" / study.slug
        try:
            report = cached_report(study, pool_versions=options["pool_versions"]).seen_by(may_see_raw_ids(user) and may_see_reference(study, user))
        except ReportError as exc:
            raise CommandError(str(exc)) from None
        written = report.write(out, figures=not options["no_figures"])
        self.stdout.write(report.summary_text())
        self.stdout.write("")
        for line in written_lines(written):
            self.stdout.write(line)
        self.stdout.write(self.style.SUCCESS(f"written {len(written)} files to {out}"))

    def set_options(self, study, texts) -> None:
        """Validate the ``--option`` values and store them on the study (all or none)."""
        try:
            chosen = parse_options(texts)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        merged = {**(study.report_options or {}), **chosen}
        errors = option_errors(study.kind.report_options, merged)
        if errors:
            raise CommandError("; ".join(errors))
        study.report_options = merged
        study.save(update_fields=["report_options"])
        self.stdout.write(f"report options of {study.slug}: " + ", ".join(f"{k}={v}" for k, v in merged.items()))
