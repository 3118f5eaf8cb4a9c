"""``check_study`` on a fresh clone, before ``migrate`` (issue 32 point 7): it ended in a traceback (no such
table: surveys_study). Checking a file needs no database; the one check that does (a reference study) says so
in one line. Run as a subprocess with the settings pointed at an empty SQLite file."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def check_study(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    database = tmp_path / "empty.sqlite3"
    database.touch()
    return subprocess.run([sys.executable, "manage.py", "check_study", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HEDGELAB_VAR_DIR": str(tmp_path),
                               "DJANGO_SETTINGS_MODULE": "config.settings",
                               "DATABASE_URL": f"sqlite:///{database}"})


def tables(tmp_path: Path) -> list[str]:
    with sqlite3.connect(tmp_path / "empty.sqlite3") as db:
        return [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]


def test_check_study_checks_a_file_without_a_migrated_database(tmp_path):
    result = check_study(tmp_path, "studies/examples/hedge-confidence/study.toml")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "study 'hedge-confidence'" in result.stdout and "── item" in result.stdout
    assert "OK: nothing was written" in result.stdout
    assert tables(tmp_path) == []  # the project's database was not migrated or written to


def test_a_reference_study_is_named_as_not_checked_and_a_bad_file_still_fails(tmp_path):
    result = check_study(tmp_path, "studies/belem-verifiable/study.toml", "--items", "1")
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stdout.splitlines() if line.startswith("study.reference")]
    assert notes == ["study.reference 'demo': not checked, it needs the project's database (run manage.py "
                     "migrate, then load_study the reference study)"]
    bad = tmp_path / "bad" / "study.toml"
    bad.parent.mkdir()
    bad.write_text((ROOT / "studies/examples/hedge-confidence/study.toml").read_text()
                   .replace("[study]", "[study]\nkindd = 3", 1))
    result = check_study(tmp_path, str(bad))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "study.kindd" in result.stderr and "unknown key" in result.stderr
