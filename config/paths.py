"""Where the project's files are: a source checkout, or an installed wheel.

In a checkout (``manage.py`` beside ``config/``) the site's folders (``templates``, ``static``, ``studies``,
``locale``) are the checkout's own and run-time files go to ``<checkout>/var``. An installed wheel carries the
same folders inside ``config/site/`` (copied there by ``setup.py``'s build step) and keeps its run-time files in
``./var`` of the folder it is run from, unless ``HEDGELAB_VAR_DIR`` says otherwise.
"""
from __future__ import annotations

from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
IN_CHECKOUT = (CHECKOUT / "manage.py").is_file() and (CHECKOUT / "templates").is_dir()
# The folders a wheel ships inside the config package (setup.py: SITE_FOLDERS).
SITE_FOLDERS = ("templates", "static", "studies", "locale")
SITE_ROOT = CHECKOUT if IN_CHECKOUT else Path(__file__).resolve().parent / "site"


def site_folder(name: str) -> Path:
    """The folder ``name`` (one of SITE_FOLDERS) of this installation."""
    if name not in SITE_FOLDERS:
        raise ValueError(f"not a site folder: {name}")
    return SITE_ROOT / name


def default_var_dir() -> Path:
    """Run-time files (SQLite, cache, secret key) when HEDGELAB_VAR_DIR is unset."""
    return CHECKOUT / "var" if IN_CHECKOUT else Path.cwd() / "var"
