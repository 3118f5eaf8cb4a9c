"""A command's start-up (django.setup(): the models and the admin's modules) imports none of the heavy libraries
a model run, a draw or the API needs (bench/startup.py measures the time; this holds the list)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("openai", "httpx2", "httpcore2", "redis", "numpy", "pandas", "scipy", "matplotlib", "sqlalchemy",
         "rest_framework.serializers", "rest_framework.compat", "pyarrow")

PROBE = """
import json, sys, django
django.setup()
from importlib.util import _LazyModule
loaded = [m for m in %r if m in sys.modules and not isinstance(sys.modules[m], _LazyModule)]
print(json.dumps(loaded))
"""


def loaded_after_setup() -> list[str]:
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="config.settings")
    done = subprocess.run([sys.executable, "-c", PROBE % (HEAVY,)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_start_up_imports_no_heavy_library():
    assert loaded_after_setup() == []


def test_a_lazy_module_loads_on_first_use():
    probe = ("import sys; from config.lazy_import import lazy_module; from importlib.util import _LazyModule\n"
             "m = lazy_module('colorsys'); before = isinstance(sys.modules['colorsys'], _LazyModule)\n"
             "m.rgb_to_hsv(1, 0, 0); print(before, isinstance(sys.modules['colorsys'], _LazyModule))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          check=True)
    assert done.stdout.split() == ["True", "False"]
