"""python manage.py reproduce FILE.zip [--expect-sha256 HEX] [--max-size MB]
[--rerun-models --endpoint NAME [--yes --budget USD]]"""
import argparse
import re
import sys
from decimal import Decimal, InvalidOperation

from django.core.management.base import BaseCommand, CommandError

from access.cli import acting_user, add_as_argument, scoped
from analysis.replication.archive import Limits, PackageRefused, sha256_hex
from analysis.replication.reproduce import (ScratchFailed, checked_bytes, diff_text, endpoint_spec, plan_cost,
                                            plan_text, reproduce, rerun_confirmed, rerun_text)
from surveys.cli import lookup


def sha256_argument(value: str) -> str:
    if not re.fullmatch(r"[0-9a-fA-F]{64}", value.strip()):
        raise argparse.ArgumentTypeError(f"{value!r} is not a SHA-256 (64 hexadecimal digits)")
    return value.strip().lower()


def budget_argument(value: str) -> Decimal:
    try:
        budget = Decimal(value)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"{value!r} is not an amount in USD") from None
    if not budget.is_finite() or budget < 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not an amount in USD")
    return budget


def confirmed_interactively(count: int) -> bool:
    """Whether the person at the terminal types ``yes`` (False without a terminal)."""
    if not sys.stdin.isatty():
        return False
    return input(f"Send these {count} request(s) on your endpoint's key? Type yes to send: ").strip().lower() == "yes"


class Command(BaseCommand):
    help = ("Check a replication package: its SHA-256 against the one a paper cites (--expect-sha256), its files "
            "(only the names the package format defines, no links, within --max-size; it is never extracted) and "
            "its MANIFEST (a changed, missing or extra file is refused); "
            "load it into a fresh scratch SQLite database (never this site's database; a packaged reference study "
            "first), recompute the report and "
            "print its differences from the packaged one, table by table and figure by figure; exit status 1 "
            "when there are any. --rerun-models asks the stored prompts again of an endpoint: it first shows the requests, "
            "their parameters and the estimated tokens and cost, refuses parameters outside the platform's own "
            "bounds, and sends nothing until you type yes (or --yes with a --budget the estimate fits).")

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
        parser.add_argument("--yes", action="store_true",
                            help="send without asking (with --rerun-models and --budget): only when the "
                                 "estimated cost at the endpoint's prices is within the budget")
        parser.add_argument("--budget", metavar="USD", type=budget_argument,
                            help="the most the rerun may cost by the estimate at the endpoint's prices "
                                 "(needed with --yes, which needs an endpoint with prices)")

    def handle(self, *args, **options):
        endpoint = found = None
        if options["rerun_models"] or options["endpoint"]:
            if not (options["rerun_models"] and options["endpoint"]):
                raise CommandError("--rerun-models and --endpoint NAME go together")
            from elicitation.models import ModelEndpoint

            found = lookup(scoped(ModelEndpoint.objects.all(), acting_user(options)), "name", options["endpoint"],
                           "endpoint")
            endpoint = endpoint_spec(found)
        if options["yes"] and not (endpoint is not None and options["budget"] is not None):
            raise CommandError("--yes goes with --rerun-models --endpoint NAME and --budget USD")
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
        if endpoint is not None:
            self.stdout.write(rerun_text(self._rerun(data, endpoint, found, result.plan, limits, options)))
        if result.differences:
            raise CommandError(f"the recomputed report differs from the packaged one ({result.differences} "
                               "difference(s))", returncode=1)

    def _rerun(self, data, endpoint, found, plan, limits, options) -> list:
        """Show the plan, refuse it when its parameters are outside the bounds or it is not confirmed, else send
        exactly its requests."""
        self.stdout.write(plan_text(plan, found))
        if plan["problems"]:
            raise CommandError("refused, nothing sent: the package asks for requests the platform never sends\n"
                               + "\n".join(f"  {p}" for p in plan["problems"][:20])
                               + (f"\n  … and {len(plan['problems']) - 20} more" if len(plan["problems"]) > 20
                                  else ""))
        count, cost = len(plan["requests"]), plan_cost(plan, found)
        if options["yes"] and cost is None:
            raise CommandError(f"nothing sent: endpoint {found.name!r} has no prices, so --budget cannot bound "
                               "the cost; confirm at a terminal (without --yes), or give the endpoint its prices")
        if options["budget"] is not None and cost is not None and cost > options["budget"]:
            raise CommandError(f"nothing sent: the estimated cost ${cost} is over the budget ${options['budget']}")
        if not options["yes"] and count and not confirmed_interactively(count):
            raise CommandError("nothing sent: not confirmed (type yes at the prompt, or give --yes --budget USD)")
        try:
            return rerun_confirmed(data, endpoint, plan, limits=limits)
        except ScratchFailed as exc:
            raise CommandError(f"could not ask the models again: {exc}") from None
