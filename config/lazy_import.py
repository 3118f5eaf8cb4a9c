"""A module imported on first use: ``openai = lazy_module("openai")`` costs nothing until an attribute of it is
read (the ``openai`` package takes most of a second to import: every command would pay it at start-up through the
admin's modules). The standard library's ``importlib.util.LazyLoader``."""
from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The top-level module ``name``, loaded when one of its attributes is first read (already loaded: as it
    is). Not a submodule: finding ``a.b`` imports ``a`` at once."""
    if "." in name:
        raise ValueError(f"lazy_module takes a top-level module, not {name!r}")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
