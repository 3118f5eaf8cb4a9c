"""Shared fixtures. Tests run on SQLite by default and on PostgreSQL when DATABASE_URL is set."""
from __future__ import annotations

from pathlib import Path

import pytest

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
    """Django's cache (the entry counter when it is Redis) starts empty in every test."""
    from django.core.cache import cache

    cache.clear()
