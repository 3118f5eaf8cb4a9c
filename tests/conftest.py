"""Shared fixtures. Tests run on SQLite by default and on PostgreSQL when DATABASE_URL is set."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from stub_openai import LOOPBACK_SETTINGS, allow_loopback

allow_loopback(os.environ)  # subprocesses (workers, servers) inherit it


@pytest.fixture(autouse=True)
def _loopback_endpoints():
    """Endpoints may reach the loopback stub (pytest-django has read the settings before this file)."""
    from django.test import override_settings

    from config.env import env_list

    with override_settings(**{name: env_list(name) for name in LOOPBACK_SETTINGS}):
        yield

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
BELEM = SHARED_DATA / "belem2024-stimuli"


@pytest.fixture
def belem_dir() -> Path:
    if not BELEM.exists():
        pytest.fail(f"shared data not found at {BELEM}")
    return BELEM


@pytest.fixture
def nv_study(db):
    from surveys.models import Study

    return Study.objects.create(slug="nv", title="Non-verifiable")


@pytest.fixture
def imported_nv(nv_study, belem_dir):
    from surveys.importers import import_items

    import_items(nv_study, belem_dir / "non-verifiable.csv")
    return nv_study


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Throttle counters (config.throttle) live in Django's cache: every test starts with none."""
    from django.core.cache import cache

    cache.clear()
