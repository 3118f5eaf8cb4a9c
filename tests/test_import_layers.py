"""The import contracts of .importlinter (issue 34 point 5) hold for the project, and they can fail: the same
contracts broken by one upward import, in a copy of the project's packages, name that import.

``make test`` runs ``lint-imports`` as its first stage; this test keeps the contracts' meaning under test too
(a contract that no longer matches any module, or that cannot see an upward import, would pass silently)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")
PACKAGES = ("config", "access", "surveys", "prolific", "elicitation", "analysis", "families")


def lint(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT), "--no-cache", "--config", str(folder / ".importlinter")], cwd=folder,
                          capture_output=True, text=True, timeout=300)


def copy_project(tmp_path: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


def test_the_project_keeps_every_contract():
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_an_upward_import_breaks_the_layers_and_is_named(tmp_path):
    folder = copy_project(tmp_path)
    kept = lint(folder)
    assert kept.returncode == 0, kept.stdout + kept.stderr  # the copy is what is checked, not the installed tree
    flow = folder / "surveys" / "flow.py"
    flow.write_text(flow.read_text(encoding="utf-8") + "\n\ndef _late():\n    from analysis import exports\n",
                    encoding="utf-8")
    metric = folder / "families" / "bahaj" / "metrics" / "draws.py"
    metric.write_text(metric.read_text(encoding="utf-8") + "\nfrom django.conf import settings\n", encoding="utf-8")
    broken = lint(folder)
    assert broken.returncode == 1
    assert "surveys is not allowed to import analysis" in broken.stdout
    assert "surveys.flow -> analysis.exports" in broken.stdout  # a deferred import counts
    assert "families.bahaj.metrics is not allowed to import django" in broken.stdout
    assert "families.bahaj.metrics.draws -> django" in broken.stdout


def test_the_core_importing_the_tang_family_breaks_its_contract(tmp_path):
    folder = copy_project(tmp_path)
    commands = folder / "surveys" / "management" / "commands" / "generate_items.py"
    commands.write_text(commands.read_text(encoding="utf-8") + "\nfrom families.tang.design_rq2 import PAPER\n",
                        encoding="utf-8")
    metric = folder / "families" / "tang" / "metrics" / "divergence.py"
    metric.write_text(metric.read_text(encoding="utf-8") + "\nfrom surveys.models import Item\n", encoding="utf-8")
    broken = lint(folder)
    assert broken.returncode == 1
    assert "The core never imports a family BROKEN" in broken.stdout
    assert "surveys.management.commands.generate_items -> families.tang.design_rq2" in broken.stdout
    assert "families.tang.metrics is not allowed to import surveys.models" in broken.stdout
    assert "families.tang.metrics.divergence -> surveys.models" in broken.stdout


def test_a_core_module_importing_a_moved_family_breaks_its_contract_and_is_named(tmp_path):
    """The core reaches a family that has its own package only through the registry: a direct import of it,
    even deferred inside a function, is named (issue 34 point 1); so is the family's metrics module importing
    Django."""
    folder = copy_project(tmp_path)
    loader = folder / "surveys" / "demo" / "loader.py"
    loader.write_text(loader.read_text(encoding="utf-8")
                      + "\n\ndef _sileo():\n    from families.sileo.demo import load_verbalisation_demo\n",
                      encoding="utf-8")
    metrics = folder / "families" / "sileo" / "metrics.py"
    metrics.write_text(metrics.read_text(encoding="utf-8") + "\nimport django.db\n", encoding="utf-8")
    broken = lint(folder)
    assert broken.returncode == 1
    assert "The core never imports a family BROKEN" in broken.stdout
    assert "surveys.demo.loader -> families.sileo.demo" in broken.stdout
    assert "families.sileo.metrics -> django" in broken.stdout
