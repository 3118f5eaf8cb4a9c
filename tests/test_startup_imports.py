"""Commands and participant-serving processes start at once (issues 10 and 32): loading the URLconf, the admin and
the WSGI application imports none of the heavy analysis libraries; they are imported where they are used
(reports, exports, the attention filter, the item draw). A command's start-up (django.setup()) does not import
the model client, HTTP or Redis libraries either: they are loaded on first use (config.lazy_import;
bench/startup.py measures the time)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("pandas", "scipy", "matplotlib", "pyarrow")

PROBE = """
import json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
from config.wsgi import application  # django.setup(): apps, models, the admin's autodiscovery
from django.contrib import admin
from django.urls import get_resolver
get_resolver().url_patterns
admin.site.get_urls()
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in %r)))
""" % (HEAVY,)


def _loaded(code: str, tmp_path: Path) -> list[str]:
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HEDGELAB_VAR_DIR": str(tmp_path),
                                 "DJANGO_SETTINGS_MODULE": "config.settings"})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_urlconf_and_the_admin_import_no_heavy_library(tmp_path):
    assert _loaded(PROBE, tmp_path) == []


def test_manage_py_help_imports_no_heavy_library(tmp_path):
    code = ("import runpy, sys, json, io, contextlib\nsys.argv = ['manage.py', 'help']\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    runpy.run_path('manage.py', run_name='__main__')\n"
            f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))")
    assert _loaded(code, tmp_path) == []


LAZY_AT_START = ("openai", "httpx2", "httpcore2", "redis", "numpy", "sqlalchemy", "rest_framework.serializers",
                 "rest_framework.compat", *HEAVY)

SETUP_PROBE = """
import json, sys, django
django.setup()
print(json.dumps([m for m in %r if m in sys.modules]))
"""


def test_a_commands_start_up_loads_no_model_client_http_or_redis_library(tmp_path):
    assert _loaded(SETUP_PROBE % (LAZY_AT_START,), tmp_path) == []


def test_a_lazy_module_loads_on_first_use_once_and_is_the_real_module(tmp_path):
    probe = ("import sys, threading; from config.lazy_import import lazy_module\n"
             "m = lazy_module('colorsys'); before = 'colorsys' in sys.modules\n"
             "found = []\n"
             "threads = [threading.Thread(target=lambda: found.append(m.rgb_to_hsv)) for _ in range(8)]\n"
             "[t.start() for t in threads]; [t.join() for t in threads]\n"
             "import colorsys\n"
             "print(before, m.loaded, all(f is colorsys.rgb_to_hsv for f in found), len(found))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          check=True)
    assert done.stdout.split() == ["False", "True", "True", "8"]


def test_a_module_that_is_not_installed_is_refused_at_once():
    from config.lazy_import import lazy_module

    with pytest.raises(ModuleNotFoundError):
        lazy_module("no_such_module_here")
