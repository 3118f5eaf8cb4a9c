"""Regenerate the baseline rows of NAMED studies only, after a wording change an issue asked for on purpose.

    .venv/bin/python tests/data/prompt-baseline/regenerate.py --study tang-zh --reason "issue 23.12: …"

Builds the named studies in a throw-away test database exactly as README.md says, computes their rows with
today's code and rewrites only their lines in prompts.jsonl and pages.jsonl and their entries in examples.json;
every other study's rows stay byte for byte. There is no "all studies" mode: name each study whose wording
changed on purpose, check with ``git diff --stat`` that nothing else moved, and add a line to README.md's
"Rows regenerated on purpose" (which rows, when, why: the issue) in the same commit. A change nobody asked for
is a regression to fix, not a baseline to regenerate.
"""
from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: prompt_baseline

import prompt_baseline as baseline  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--study", action="append", required=True, choices=baseline.STUDIES,
                        help="a study whose rows are regenerated (repeatable; at least one)")
    parser.add_argument("--reason", required=True, help="why (the issue asking for the change), for README.md")
    args = parser.parse_args(argv)

    def work() -> dict[str, tuple[int, int]]:
        baseline.build_studies(args.study)
        return baseline.regenerate(args.study)

    written = baseline.in_test_database(work)
    for slug, (prompts, pages) in written.items():
        print(f"{slug}: {prompts} prompt rows, {pages} page rows regenerated")
    today = datetime.date.today().isoformat()
    print("Add to README.md, 'Rows regenerated on purpose':\n"
          f"- {today}, {', '.join(args.study)}: {args.reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
