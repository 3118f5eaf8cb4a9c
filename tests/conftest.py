"""Shared fixtures. Tests run on SQLite by default and on PostgreSQL when DATABASE_URL is set."""
from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

import pytest

from stub_openai import LOOPBACK_SETTINGS, allow_loopback

pytest_plugins = ["local_model_server"]  # the real local model's session fixtures (gguf, server)

allow_loopback(os.environ)  # subprocesses (workers, servers) inherit it
os.environ.setdefault("TEST_FAST_PASSWORD_HASHER", "1")  # config/settings.py: MD5 in tests (servers inherit it)


@pytest.fixture(autouse=True)
def _no_internet(monkeypatch):
    """Tests never reach the internet: only this machine's names resolve in the test process, and no connection
    to a public address is opened, so an endpoint at a public name or address (a fuzzed base URL, api.openai.com in
    a test) fails its pre-flight check the same way on every machine instead of sending a request out."""
    real, real_connect = socket.getaddrinfo, socket.socket.connect

    def connect(sock, address):
        if isinstance(address, tuple):
            try:
                public = ipaddress.ip_address(str(address[0]).split("%")[0]).is_global
            except ValueError:
                public = True
            if public:
                raise ConnectionRefusedError(f"tests never reach the internet (connection to {address[0]})")
        return real_connect(sock, address)

    def local_only(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        try:
            ipaddress.ip_address(str(name).split("%")[0])
        except ValueError:
            if name not in (None, "localhost", "testserver"):
                raise socket.gaierror(socket.EAI_NONAME, f"tests do not resolve {name}: they never reach the internet")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", local_only)
    monkeypatch.setattr(socket.socket, "connect", connect)


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
    """Django's cache (the entry counter when it is Redis) starts empty in every test."""
    from django.core.cache import cache

    from elicitation import preflight

    cache.clear()
    preflight._passed.clear()  # endpoints' passed pre-flight checks


#: Test files that share one server-side resource (Redis database TEST_REDIS_URL, the RabbitMQ vhost, a
#: PostgreSQL database named after DATABASE_URL's): run one after another on one parallel worker.
SHARED_SERVICES = {"test_deploy_scaleout", "test_health", "test_elicitation_self_healing", "test_limits_redis",
                   "test_counters_concurrent", "test_elicitation_worker"}
#: Test files that kill or restart workers and services and wait for what follows within a deadline: marked
#: ``solo``, which ``make test`` runs after the parallel part, alone on the machine.
SOLO = {"test_deploy_scaleout", "test_elicitation_hung_worker", "test_elicitation_restarts",
        "test_elicitation_self_healing", "test_elicitation_worker", "test_outage_real", "test_sqlite_broker"}
#: Test files that query the real bundled model: one worker, one llama.cpp server (tests/local_model_server.py).
LOCAL_MODEL = {"test_local_model", "test_sileo_local_model", "test_bahaj_local_model"}


def xdist_group(module: str) -> str:
    """The pytest-xdist group of a test file (its stem): the files that share a service or the model share one."""
    if module in SHARED_SERVICES:
        return "shared-services"
    return "local-model" if module in LOCAL_MODEL else module


#: The slowest groups, slowest first, by a full CI run's --durations on 2 quiet cores (2026-11-29, PostgreSQL, the
#: local extra; seconds per group: examples 393, local model 230, replication package 110, access matrix 99, phone
#: width 74, Bahaj report 72 and authors' report 66, admin pages 63, API schema 61, run-platform stop 51): ``make
#: test`` hands them out first (``--no-loadscope-reorder``: groups in collection order), so that no worker starts one
#: of them while the other is nearly done. Unlisted groups follow in file order.
SLOW_FIRST = ("test_examples_end_to_end", "local-model", "test_replication_package", "test_access_matrix_script",
              "test_browser_phone_width", "test_bahaj_report", "test_bahaj_report_authors", "test_admin_every_page",
              "test_api_schema", "test_run_platform_stop")


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    """SOLO files are ``solo`` (marked before -m deselects by marker). Once every plugin has ordered the items
    (Django runs its database tests first), the SLOW_FIRST groups are moved to the front."""
    for item in items:
        if item.path.stem in SOLO:
            item.add_marker(pytest.mark.solo)
    yield
    rank = {group: position for position, group in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(xdist_group(item.path.stem), len(rank)))


def group_of(nodeid: str) -> str:
    """The xdist_group of a test's node id (``tests/test_x.py::test_y[…]``): its file's, by :func:`xdist_group`."""
    return xdist_group(Path(nodeid.split("::", 1)[0]).stem)


def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist (``make test`` runs ``-n 2``) every test file goes whole to one worker (its module
    fixtures are made once, and two workers never set up the same file's resources at once), and so do the files
    of one group: SHARED_SERVICES, LOCAL_MODEL. pytest-xdist's own ``--dist loadgroup`` cannot be used: it tags
    node ids by assigning ``item._nodeid``, which pytest 9 no longer reads, so its groups silently fell apart."""
    from xdist.scheduler import LoadScopeScheduling

    class FileGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return FileGroupScheduling(config, log)
