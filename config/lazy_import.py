"""A module imported on first use: ``openai = lazy_module("openai")`` costs nothing until an attribute of it is
read (the ``openai`` package takes most of a second to import: every command would pay it at start-up through the
admin's modules).

The returned object stands in for the module and imports it, once, with ``importlib.import_module`` (thread-safe)
when an attribute is first read; ``sys.modules`` is never touched, so a plain ``import`` of the same module
elsewhere (a submodule included) gets the real one, with the same classes. (The standard library's
``importlib.util.LazyLoader`` puts a half-made module into ``sys.modules``, which on Python 3.11 two threads can
read at once, and through which ``from redis.exceptions import …`` could import a submodule a second time.)
"""
from __future__ import annotations

import importlib
import importlib.util
import threading
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands in for the module ``name``; imports it when one of its attributes is first read."""

    def __init__(self, name: str) -> None:
        self._lazy_name = name
        self._lazy_module: ModuleType | None = None
        self._lazy_lock = threading.Lock()

    def _load(self) -> ModuleType:
        module = self._lazy_module
        if module is None:
            with self._lazy_lock:
                if self._lazy_module is None:
                    self._lazy_module = importlib.import_module(self._lazy_name)
                module = self._lazy_module
        return module

    @property
    def loaded(self) -> bool:
        return self._lazy_module is not None

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._load(), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._lazy_name!r}{'' if self.loaded else ' (not imported yet)'}>"


def lazy_module(name: str) -> Any:
    """A stand-in for the module ``name`` (e.g. ``openai``, ``httpx2``), imported when an attribute is first read.
    Raises ModuleNotFoundError at once when no such module is installed."""
    if importlib.util.find_spec(name.split(".")[0]) is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return LazyModule(name)
