"""What the generic report section adds to an existing study's report: the demo study's report time without it
and with it.

    .venv/bin/python bench/generic_report.py [--participants 60] [--runs 3] [--repeat 3] [--postgres URL]

On a scratch database (SQLite in a temporary folder, or a scratch PostgreSQL database on ``--postgres``, dropped
afterwards): the demo studies (``load_demo``), ``--participants`` completed participants of ``demo`` answering
30 items each near typical values, and ``--runs`` model runs answering every item. Then, ``--repeat`` times
each, alternating: the report built (``build_report``, no cache) and every figure rendered as PNG and SVG,
once with the family sections only (as before the generic section) and once with ``generic`` added. Prints
the best (least disturbed by other load on the machine) seconds of each, the difference, and each figure's
render time. Nothing is asserted; the figures depend on the machine.
"""
from __future__ import annotations

import argparse
import os
import random
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
    parser.add_argument("--participants", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres", help="PostgreSQL server URL (without a database name)")
    args = parser.parse_args()
    with scratch_environment(args.postgres):
        run(args)


def populate(study, participants: int, runs: int, rng: random.Random) -> None:
    from django.utils import timezone

    from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
    from surveys.models import Assignment, Participant, Response

    items = list(study.main_items())
    typical = {label: rng.uniform(5, 95) for label in {i.label for i in items}}
    now = timezone.now()
    for n in range(participants):
        person = Participant.objects.create(study=study, prolific_pid=f"bench{n}", started_at=now)
        chosen = rng.sample(items, min(30, len(items)))
        slots = Assignment.objects.bulk_create([Assignment(participant=person, item=item, position=k + 1)
                                                for k, item in enumerate(chosen)])
        Response.objects.bulk_create([
            Response(assignment=slot, participant=person, item=slot.item,
                     value=float(min(100, max(0, 5 * round((typical[slot.item.label] + rng.gauss(0, 10)) / 5)))))
            for slot in slots])
        person.status, person.completed_at = Participant.Status.COMPLETED, now
        person.save(update_fields=["status", "completed_at"])
    for r in range(runs):
        endpoint = ModelEndpoint.objects.create(name=f"model{r}", base_url="http://127.0.0.1:9/v1", model=f"m{r}")
        run = ElicitationRun.objects.create(study=study, endpoint=endpoint, status=ElicitationRun.Status.COMPLETED)
        ModelResponse.objects.bulk_create([
            ModelResponse(run=run, item=item, raw_output="x", answered_at=now, status="ok",
                          value=float(min(100, max(0, 5 * round((typical[item.label] + rng.gauss(r * 5, 8)) / 5)))))
            for item in items])


FIGURE_SECONDS: dict[str, list[float]] = {}


def timed(study, generic: bool) -> tuple[float, float, int]:
    """(seconds to build, seconds to render every figure as PNG and SVG, figures) of one report."""
    import analysis.reports as reports

    reports.ALWAYS = ("generic",) if generic else ()
    start = time.perf_counter()
    report = reports.build_report(study)
    built = time.perf_counter() - start
    figures = report.figures()
    total = 0.0
    for name, fig in figures:
        start = time.perf_counter()
        reports.figure_bytes(fig)
        seconds = time.perf_counter() - start
        FIGURE_SECONDS.setdefault(name, []).append(seconds)
        total += seconds
    return built, total, len(figures)


def run(args) -> None:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("load_demo", "--no-links", verbosity=0, stdout=open(os.devnull, "w"))
    from surveys.models import Study

    study = Study.objects.get(slug="demo")
    populate(study, args.participants, args.runs, random.Random(0))
    timed(study, True)  # warm up (imports, matplotlib's font cache)
    results: dict[bool, list[tuple[float, float, int]]] = {False: [], True: []}
    for _ in range(args.repeat):
        for generic in (False, True):
            results[generic].append(timed(study, generic))
    print(f"study {study.slug!r}: {args.participants} participants, {args.runs} model runs, "
          f"{study.main_items().count()} items; best of {args.repeat}")
    for generic, label in ((False, "family sections only"), (True, "with the generic section")):
        rows = results[generic]
        build = min(r[0] for r in rows)
        render = min(r[1] for r in rows)
        print(f"{label:28s} build {build:6.2f} s   figures {render:6.2f} s ({rows[0][2]} figures)   "
              f"total {build + render:6.2f} s")
    before = min(r[0] + r[1] for r in results[False])
    after = min(r[0] + r[1] for r in results[True])
    print(f"difference: {after - before:+.2f} s ({(after / before - 1) * 100:+.0f}%)")
    for name, seconds in FIGURE_SECONDS.items():
        print(f"  figure {name:40s} {min(seconds):5.2f} s (best of {len(seconds)})")


if __name__ == "__main__":
    main()
