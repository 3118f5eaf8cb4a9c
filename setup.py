"""Build step of the wheel: the site's folders go inside the ``config`` package (config/paths.py finds them).

Everything else is declared in pyproject.toml. An editable install (``make install``) reads the checkout's
folders directly and copies nothing.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
SITE_FOLDERS = ("templates", "static", "studies", "locale")  # config/paths.py: SITE_FOLDERS


class BuildWithSiteFolders(build_py):
    """build_py, then the site's folders copied into build/lib/config/site/."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "config" / "site"
        for name in SITE_FOLDERS:
            shutil.copytree(HERE / name, target / name, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildWithSiteFolders})
