"""Compare today's wording with the baseline, by hand: matching and differing rows per study.

    .venv/bin/python tests/data/prompt-baseline/compare.py                  # every study
    .venv/bin/python tests/data/prompt-baseline/compare.py --study tang-rq2 # one (repeat --study for more)
    .venv/bin/python tests/data/prompt-baseline/compare.py --study tang-zh --show 5

Builds the studies in a throw-away test database (SQLite in memory by default; DATABASE_URL's engine otherwise,
in a test database beside it) exactly as README.md says, and prints, per study, the prompt and page rows that
match, differ, are missing or extra, with the first differing rows (``--show``). Exit status 1 when a row differs.
The same check runs in CI as tests/test_prompt_baseline.py (``pytest tests/test_prompt_baseline.py -k tang-rq2``).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: prompt_baseline

import prompt_baseline as baseline  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--study", action="append", choices=baseline.STUDIES,
                        help="a study of the baseline (repeatable; default: all)")
    parser.add_argument("--show", type=int, default=3, help="differing rows shown per study and file (default 3)")
    args = parser.parse_args(argv)
    studies = args.study or list(baseline.STUDIES)

    def work() -> bool:
        started = time.perf_counter()
        baseline.build_studies(studies)
        built = time.perf_counter()
        ok = True
        for slug in studies:
            for comparison in baseline.compare_study(slug):
                ok &= comparison.ok
                print(baseline.describe(comparison, args.show) if not comparison.ok else comparison.summary())
        print(f"built in {built - started:.1f} s, compared in {time.perf_counter() - built:.1f} s")
        return ok

    return 0 if baseline.in_test_database(work) else 1


if __name__ == "__main__":
    sys.exit(main())
