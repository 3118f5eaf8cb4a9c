"""``make test PYTEST_ARGS=tests/test_x.py`` (bin/run-tests) exited with Error 5 although the file's tests passed:
its second stage (the ``solo`` tests) collected none (issue 32 point 10). A stage that collects nothing is fine
when the arguments select tests; nothing collected in either stage is still exit 5. Runs the script on a folder
of its own (its own pytest.ini), so no project test runs inside this one."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "bin" / "run-tests"


def run(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTEST_WORKERS": "1"}  # one xdist worker: the same two stages, one process fewer
    for name in ("PYTEST_ADDOPTS", "DJANGO_SETTINGS_MODULE"):
        env.pop(name, None)
    return subprocess.run([sys.executable, str(SCRIPT), *args, "-c", str(folder / "pytest.ini"),
                           "-p", "no:cacheprovider", "-p", "no:django"], cwd=folder, capture_output=True, text=True, timeout=300,
                          env=env)


def test_a_file_of_one_stage_passes_and_nothing_collected_fails(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    solo: alone\n")
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert True\n")
    (tmp_path / "test_alone.py").write_text("import pytest\n\n@pytest.mark.solo\ndef test_alone():\n"
                                            "    assert True\n")
    (tmp_path / "test_broken.py").write_text("def test_broken():\n    assert False\n")
    plain = run(tmp_path, "test_plain.py")
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "1 passed" in plain.stdout and "-m solo" in plain.stdout  # both stages ran
    alone = run(tmp_path, "test_alone.py")
    assert alone.returncode == 0 and "1 passed" in alone.stdout
    nothing = run(tmp_path, "test_plain.py", "-k", "no_such_test")
    assert nothing.returncode == 5 and "no test was collected" in nothing.stderr
    broken = run(tmp_path, "test_broken.py")
    assert broken.returncode == 1 and "1 failed" in broken.stdout


def test_the_whole_suite_starts_with_the_import_contracts():
    """``make test`` (no arguments) runs lint-imports first, from this environment; a chosen file skips it."""
    import importlib.util
    from importlib.machinery import SourceFileLoader

    loader = SourceFileLoader("run_tests", str(SCRIPT))
    script = importlib.util.module_from_spec(importlib.util.spec_from_loader("run_tests", loader))
    loader.exec_module(script)
    command = script.contracts([])
    assert command is not None and Path(command[0]).name == "lint-imports" and Path(command[0]).exists()
    assert script.contracts(["tests/test_x.py"]) is None
