"""How long one participant's draw takes (surveys.assignment) on a large study, i.e. how long the study's
row lock is held while a participant signs the pledge.

    .venv/bin/python bench/assignment.py [--items 40000] [--participants 20] [--postgres URL]

Builds a scratch study (a SQLite file in a temporary HEDGELAB_VAR_DIR, or a fresh PostgreSQL database that
is dropped afterwards) with ``--items`` items (14 expressions + control, one statement per 15 items), then
draws the items of ``--participants`` participants one after the other and prints the time per draw
(median and max) and the balance (max − min use per pool). Nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path[:0] = [str(ROOT)]
from bench.scratch import scratch_environment  # noqa: E402 (needs ROOT on the path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=40_000)
    parser.add_argument("--participants", type=int, default=20)
    parser.add_argument("--postgres", help="PostgreSQL server URL (without a database name)")
    args = parser.parse_args()
    with scratch_environment(args.postgres):
        run(args)


def run(args) -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    call_command("migrate", verbosity=0)
    from surveys.assignment import assign, item_usage
    from families.belem.instrument import EXPRESSIONS
    from surveys.models import Item, Participant, Study

    study = Study.objects.create(slug="big", title="Big", status=Study.Status.LIVE)
    labels = [*EXPRESSIONS, ""]
    items = [Item(study=study, key=f"s{n // len(labels)}|{labels[n % len(labels)] or 'control'}",
                  expression=labels[n % len(labels)], is_control=not labels[n % len(labels)],
                  statement=f"Statement number {n // len(labels)}.", statement_id=f"s{n // len(labels)}",
                  statement_type="t")
             for n in range(args.items)]
    Item.objects.bulk_create(items, batch_size=2000)
    rng = random.Random(1)
    times = []
    for p in range(args.participants):
        participant = Participant.objects.create(study=study, prolific_pid=f"P{p}", consented_at=timezone.now(),
                                                 instructions_read_at=timezone.now(), pledged_at=timezone.now())
        started = time.perf_counter()
        assign(participant, rng)
        times.append(time.perf_counter() - started)
    usage = item_usage(study)
    by_label: dict[str, list[int]] = {}
    for item in study.main_items().values("id", "expression"):
        by_label.setdefault(item["expression"], []).append(usage[item["id"]])
    spread = max(max(u) - min(u) for u in by_label.values())
    print(f"{args.items} items, {args.participants} draws on {os.environ.get('DATABASE_URL', 'SQLite').split('@')[-1]}: "
          f"median {statistics.median(times):.3f} s, max {max(times):.3f} s per draw; "
          f"max − min use within a pool: {spread}")


if __name__ == "__main__":
    main()
