"""A study file names metrics (``[report] metrics``) and sections from the installed families, and a lab's own
family (examples/lab-family) installed with pip contributes a metric and a section its study file uses."""
from __future__ import annotations

import io
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from analysis.reports import build_report
from config import registry
from surveys.definition.loader import load_file
from surveys.models import Study, StudyVersion
from test_generic_report import make_study, model_run, person

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "examples" / "lab-family"
HUMANS = {"P1": {"s1": 10, "s2": 20, "s3": 30}, "P2": {"s1": 50, "s2": 60, "s3": 70}}
MODEL = {"s1": 40, "s2": 50, "s3": 60}


def test_a_study_naming_metrics_gets_the_metrics_section_one_column_per_metric():
    definition = {"answer": {"shape": "scale", "min": 1, "max": 7, "step": 1},
                  "report": {"sections": ["generic"], "metrics": ["mean-value", "answer-count"]}}
    study = make_study(definition=definition, instrument="generic", items=("a1", "a2"))
    person(study, "P1", lambda item: {"value": 2 if item.key == "a1" else 4})
    person(study, "P2", lambda item: {"value": 6})
    model_run(study, lambda item: {"value": 7})
    report = build_report(study)
    assert list(report.sections) == ["generic", "metrics"]  # generic named first, metrics after the named
    table = report.tables()["metrics"].set_index("agent")
    assert list(table.columns) == ["mean-value", "answer-count"]
    assert table.loc["human", "mean-value"] == pytest.approx(4.5) and table.loc["human", "answer-count"] == 4
    assert table.loc["gpt (greedy)", "mean-value"] == 7 and table.loc["gpt (greedy)", "answer-count"] == 2
    assert report.meta()["metrics"] == {"metrics": {"mean-value": "generic", "answer-count": "generic"}}


def test_a_study_naming_no_metrics_has_no_metrics_section_and_dumps_as_before():
    from surveys.definition.schema import ReportTable

    study = make_study(definition={"answer": {"shape": "scale", "min": 1, "max": 7, "step": 1}}, instrument="generic")
    person(study, "P1", lambda item: {"value": 3})
    assert "metrics" not in build_report(study).sections
    assert "metrics" not in ReportTable.model_validate({"sections": ["generic"]}).model_dump()


def test_check_study_refuses_an_unknown_metric_and_section_naming_the_key(tmp_path):
    text = (LAB / "hedgelab_lab_example" / "study" / "study.toml").read_text(encoding="utf-8")
    (tmp_path / "items.csv").write_bytes((LAB / "hedgelab_lab_example" / "study" / "items.csv").read_bytes())
    (tmp_path / "study.toml").write_text(text.replace('sections = ["lab_spread"]', 'sections = ["generic"]')
                                         .replace('"iqr"', '"median-spread"'), encoding="utf-8")
    with pytest.raises(CommandError, match=r"(?s)report\.metrics.*unknown metric\(s\) 'median-spread'; known: "
                                           r"answer-count, mean-value, majority-choice"):
        call_command("check_study", str(tmp_path / "study.toml"), stdout=io.StringIO())
    (tmp_path / "study.toml").write_text(text, encoding="utf-8")  # the lab family is not installed here
    with pytest.raises(CommandError, match=r"(?s)report\.sections.*unknown report section\(s\) 'lab_spread'"):
        call_command("check_study", str(tmp_path / "study.toml"), stdout=io.StringIO())


@pytest.fixture
def lab_installed(tmp_path_factory, monkeypatch):
    """examples/lab-family installed with pip into a folder put on sys.path (the main environment unchanged)."""
    target = tmp_path_factory.mktemp("lab-site")
    build = tmp_path_factory.mktemp("lab-build")
    source = build / "lab-family"  # a copy: building writes build/ and *.egg-info beside the sources
    shutil.copytree(LAB, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(target), str(source)], check=True, cwd=build,
                   env={"PATH": "/usr/bin:/bin", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "HOME": str(build)})
    monkeypatch.syspath_prepend(str(target))
    registry.reset()
    yield target
    registry.reset()
    for name in [m for m in sys.modules if m.split(".")[0] == "hedgelab_lab_example"]:
        del sys.modules[name]


def test_a_lab_family_installed_with_pip_adds_its_section_and_metric_to_its_study(lab_installed):
    out = io.StringIO()
    call_command("families", stdout=out)
    assert ("lab-example: Example lab family" in out.getvalue()
            and "from: hedgelab-lab-example 0.1.0, module hedgelab_lab_example" in out.getvalue())
    # its declaration is loaded; its metric and section only when a study uses them
    assert "hedgelab_lab_example" in sys.modules and "hedgelab_lab_example.section" not in sys.modules
    study_file = lab_installed / "hedgelab_lab_example" / "study" / "study.toml"
    call_command("check_study", str(study_file), stdout=io.StringIO())
    load_file(study_file)
    study = Study.objects.get(slug="lab-spread")
    version = StudyVersion.objects.get(study=study)
    for pid, answers in HUMANS.items():
        person(study, pid, lambda item, answers=answers: {"value": answers[item.key]}, version=version)
    model_run(study, lambda item: {"value": MODEL[item.key]}, version=version)
    report = build_report(study)
    assert list(report.sections) == ["lab_spread", "metrics", "generic"]
    spread = report.tables()["lab_spread"].set_index("agent")
    assert spread.loc["human", "answers"] == 6 and spread.loc["human", "median"] == 40
    assert spread.loc["human", "iqr"] == pytest.approx(35)  # 57.5 − 22.5 (linear quantiles of 10…70)
    assert spread.loc["gpt (greedy)", "iqr"] == pytest.approx(10)
    metrics = report.tables()["metrics"].set_index("agent")
    assert metrics.loc["human", "iqr"] == pytest.approx(35) and metrics.loc["human", "mean-value"] == 40
    assert metrics.loc["gpt (greedy)", "mean-value"] == 50
    assert report.meta()["metrics"]["metrics"] == {"iqr": "lab-example", "mean-value": "generic"}
    assert report.titles()["lab_spread"] == "Spread of the answers per agent (lab)"
    assert not math.isnan(report.to_json()["tables"]["lab_spread"][0]["iqr"])
