"""The benchmark's row-by-row implementation gives the same numbers as the vectorised metrics, and the
metric modules stay free of Django."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
METRIC_MODULES = sorted(  # every module of analysis/metrics/, and each family package's metrics module
    [f"analysis.metrics.{p.stem}" for p in (ROOT / "analysis" / "metrics").glob("*.py") if p.stem != "__init__"]
    + [f"families.{p.parent.name}.metrics" for p in (ROOT / "families").glob("*/metrics.py")]
    + [f"families.{p.parent.parent.name}.metrics.{p.stem}" for p in (ROOT / "families").glob("*/metrics/*.py")
       if p.stem != "__init__"])


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_analysis", ROOT / "bench" / "analysis.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sample(bench):
    return bench.make_answers(12_000, seed=3)


def test_generator_shape(bench, sample):
    nv, v = sample
    assert 11_000 < len(nv) + len(v) <= 12_000
    for df in (nv, v):
        assert set(df["agent"]) == {"human", *bench.MODELS}
        assert df["value"].dropna().between(0, 100).all()
        assert df["dist"].notna().any() and df["value"].isna().any()
    assert set(nv["truth"]) == {""} and set(v["truth"]) == {"true", "false"}


def test_row_by_row_report_gives_the_same_numbers(bench, sample):
    nv, v = sample
    fast, _ = bench.full_report(nv, v)
    naive = bench.naive_report(nv, v)
    assert naive["nv"]["gpt-4"]["pa"] > 0 and len(naive["rho"]) > 100 and len(naive["gaps"]) > 50
    assert bench.compare(fast, naive) == []
    # The comparison does notice a difference.
    naive["nv"]["gpt-4"]["pa"] += 1e-6
    naive["rho"][next(iter(naive["rho"]))] = 0.123
    problems = bench.compare(fast, naive)
    assert len(problems) == 2 and "nv gpt-4 pa" in problems[0]


def test_bench_export_hook_exists(bench, capsys, sample):
    bench.bench_export(sample[0])
    assert "export" in capsys.readouterr().out


def test_metric_modules_import_without_django():
    code = ("import sys; sys.modules['django'] = None\n"  # any `import django…` now fails
            f"import {', '.join(METRIC_MODULES)}\nprint('ok')")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"

