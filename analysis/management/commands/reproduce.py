"""python manage.py reproduce FILE.zip [--expect-sha256 HEX] [--max-size MB] [--rerun-models --endpoint NAME]"""
import argparse
import re

from django.core.management.base import BaseCommand, CommandError

from access.cli import acting_user, add_as_argument, scoped
from analysis.replication.archive import Limits, PackageRefused, sha256_hex
from analysis.replication.reproduce import (ScratchFailed, checked_bytes, diff_text, endpoint_spec, reproduce,
                                            rerun_text)
from surveys.cli import lookup


def sha256_argument(value: str) -> str:
    if not re.fullmatch(r"[0-9a-fA-F]{64}", value.strip()):
        raise argparse.ArgumentTypeError(f"{value!r} is not a SHA-256 (64 hexadecimal digits)")
    return value.strip().lower()


class Command(BaseCommand):
    help = ("Check a replication package: its SHA-256 against the one a paper cites (--expect-sha256), its files "
            "(only the names the package format defines, no links, within --max-size; it is never extracted) and "
            "its MANIFEST (a changed, missing or extra file is refused); "
            "load it into a fresh scratch SQLite database (never this site's database; a packaged reference study "
            "first), recompute the report and "
            "print its differences from the packaged one, table by table and figure by figure; exit status 1 "
            "when there are any. --rerun-models asks the stored prompts again of an endpoint.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("file", metavar="FILE.zip", help="the package (manage.py package)")
        parser.add_argument("--expect-sha256", metavar="HEX", type=sha256_argument,
                            help="the SHA-256 of the package file as published with the paper (64 hex digits): "
                                 "a package with another hash is refused before anything is read from it")
        parser.add_argument("--max-size", metavar="MB", type=int, default=Limits().total_bytes >> 20,
                            help="the largest package read, in MB, uncompressed (each file and all of them "
                                 "together; default %(default)s); a zip also has at most "
                                 f"{Limits().members} files and none expands more than {Limits().ratio} times")
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
        if options["max_size"] < 1:
            raise CommandError("--max-size: at least 1 MB")
        limits = Limits.of_size(options["max_size"])
        try:
            data = checked_bytes(options["file"], options["expect_sha256"], limits)
            self.stdout.write(f"package {options['file']}: SHA-256 {sha256_hex(data)}"
                              + (" (as expected)" if options["expect_sha256"] else ""))
            result = reproduce(data, endpoint, limits=limits)
        except PackageRefused as exc:
            raise CommandError(f"refused, nothing loaded: {exc.heading}\n"
                               + "\n".join(f"  {p}" for p in exc.lines())) from None
        except ScratchFailed as exc:
            raise CommandError(f"could not recompute the package: {exc}") from None
        self.stdout.write(diff_text(result))
        if result.rerun is not None:
            self.stdout.write(rerun_text(result.rerun))
        if result.differences:
            raise CommandError(f"the recomputed report differs from the packaged one ({result.differences} "
                               "difference(s))", returncode=1)
