"""How long a command takes to start: the platform's ``manage.py`` against a bare Django project's, same machine,
same run.

    .venv/bin/python bench/startup.py [--runs 5] [--imports]

For each command (``help``, ``check_study`` of a shipped file, ``check``) it runs ``manage.py`` ``--runs`` times
in a fresh interpreter and prints the median wall-clock and CPU seconds; then the ceiling, a bare Django project
(the same Django, no apps of ours: bench/bare_startup_settings.py) running ``check``, and the ratio of the two.
The goal (issue 32): a command that touches no model starts in under 1 s. ``--imports`` also prints the
third-party packages the platform's start-up imports, with their cumulative import time (``python -X
importtime``), largest first: what to make lazy next.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
GOAL_SECONDS = 1.0
COMMANDS = {
    "help": ["help"],
    "check_study": ["check_study", "studies/examples/word-choice/study.toml"],
    "check": ["check"],
}


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``args`` (CPU: user + system of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def medians(args: list[str], env: dict[str, str], runs: int) -> tuple[float, float]:
    timed(args, env)  # warm the file cache and the .pyc files
    samples = [timed(args, env) for _ in range(runs)]
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def third_party_imports(env: dict[str, str]) -> list[tuple[float, str]]:
    """(seconds, top-level package) of every package outside the project the start-up imports: the import time
    of all its modules, their own part (what importing them costs beyond the other packages they import)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "manage.py", "help"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    ours = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
    totals: dict[str, float] = {}
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*([\w.]+)", line)
        if match:
            name = match.group(2).split(".")[0]
            if name not in ours and name not in sys.stdlib_module_names:
                totals[name] = totals.get(name, 0.0) + int(match.group(1)) / 1e6
    return sorted(((s, n) for n, s in totals.items()), reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--imports", action="store_true")
    options = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env.setdefault("HEDGELAB_VAR_DIR", str(ROOT / "var" / "bench-startup"))
    python = sys.executable

    subprocess.run([python, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
    print(f"{'command':<14}{'wall s':>9}{'CPU s':>9}   (median of {options.runs}; goal: under {GOAL_SECONDS:g} s)")
    figures = {}
    for name, args in COMMANDS.items():
        wall, cpu = medians([python, "manage.py", *args], env, options.runs)
        figures[name] = wall
        print(f"{name:<14}{wall:>9.2f}{cpu:>9.2f}")
    bare_env = dict(env, DJANGO_SETTINGS_MODULE="bench.bare_startup_settings", PYTHONPATH=str(ROOT))
    bare_wall, bare_cpu = medians([python, "-m", "django", "check"], bare_env, options.runs)
    print(f"{'bare Django':<14}{bare_wall:>9.2f}{bare_cpu:>9.2f}   (ceiling: a project with no apps of ours)")
    print(f"ratio bare Django / platform: help {bare_wall / figures['help']:.2f}, "
          f"check_study {bare_wall / figures['check_study']:.2f}, check {bare_wall / figures['check']:.2f}")
    if options.imports:
        print("\nthird-party packages imported at start-up (seconds of their own modules, one run):")
        for seconds, name in third_party_imports(env)[:20]:
            print(f"  {seconds:6.3f}  {name}")


if __name__ == "__main__":
    main()
