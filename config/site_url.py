"""SITE_URL, the address the links printed for researchers point at (participant, preview, Prolific links)."""
from __future__ import annotations

from pathlib import Path

from .remembered import read

DEFAULT = "http://127.0.0.1:8000"
REMEMBERED = "site-url"  # `make run` (bin/run-platform) writes the address it serves on here, in the var directory


def site_url(environment_value: str, var_dir: Path) -> str:
    """``SITE_URL`` from the environment; else the address the last ``make run`` served on (kept in
    ``<var>/site-url``), so that a command run in another terminal (``create_study``, ``show_links``) prints
    links to the port in use; else ``http://127.0.0.1:8000``."""
    if environment_value.strip():
        return environment_value.strip().rstrip("/")
    return (read(var_dir, REMEMBERED) or DEFAULT).rstrip("/")
