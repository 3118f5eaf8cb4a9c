"""The wheel runs by itself: built from this checkout, installed into a fresh virtual environment, it checks,
migrates and loads a shipped study from the installed package, run from a folder that is not the checkout."""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(out), str(ROOT)], check=True, cwd=out, timeout=300)
    (built,) = out.glob("hedgelab-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh environment with the wheel installed; its dependencies are read from this environment's
    site-packages through a .pth line (which adds the folder but runs none of its .pth files, so the checkout's
    editable install stays out)."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    "--target", str(purelib), str(wheel)], check=True, timeout=300)
    (purelib / "zz_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return env_dir


def run(installed: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DJANGO_SETTINGS_MODULE", "PYTHONPATH", "DATABASE_URL", "HEDGELAB_VAR_DIR",
                        "PYTEST_XDIST_WORKER")}
    return subprocess.run([str(installed / "bin" / "python"), "-c",
                           "import sys; from config.command_line import main; sys.argv[0] = 'hedgelab'; main()",
                           *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_wheel_carries_the_site(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for member in ("access/ownership.py", "config/site/templates/base.html", "config/site/static/favicon.svg",
                   "config/site/studies/belem/study.toml", "config/site/locale/zh_Hans/LC_MESSAGES/django.mo",
                   "families/tang/rq1_contexts.toml", "families/tang/metrics/divergence.py",
                   "families/sileo/instrument.py", "families/sileo/wep_reasoning_factoids.toml",
                   "families/belem/metrics/tables.py", "families/bahaj/metrics/draws.py"):
        assert member in names, member
    assert not any(name.startswith(("tests/", "bench/", "docs/")) for name in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "hedgelab = config.command_line:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_the_installed_wheel_checks_migrates_and_loads_a_shipped_study(installed, tmp_path):
    where = run(installed, tmp_path, "shell", "-c", "import config, surveys; print(config.__file__)")
    assert where.returncode == 0, where.stderr
    assert str(installed) in where.stdout and str(ROOT) not in where.stdout

    check = run(installed, tmp_path, "check")
    assert check.returncode == 0, check.stderr
    assert "no issues" in check.stdout
    migrate = run(installed, tmp_path, "migrate", "--noinput", "-v0")
    assert migrate.returncode == 0, migrate.stderr
    assert (tmp_path / "var" / "db.sqlite3").is_file()  # run-time files in ./var, not in site-packages

    loaded = run(installed, tmp_path, "load_study", "belem")  # studies/belem/study.toml, by name
    assert loaded.returncode == 0, loaded.stderr
    assert "study 'demo' created" in loaded.stdout and "300 items" in loaded.stdout
    example = run(installed, tmp_path, "load_study", "examples/word-choice")
    assert example.returncode == 0, example.stderr

    site = run(installed, tmp_path, "shell", "-c",
               "from django.template.loader import get_template; from django.contrib.staticfiles import finders; "
               "print(get_template('surveys/consent.html').origin.name); print(finders.find('favicon.svg'))")
    assert site.returncode == 0, site.stderr
    template, static = site.stdout.strip().splitlines()[-2:]
    assert template.startswith(str(installed)) and static.startswith(str(installed))
