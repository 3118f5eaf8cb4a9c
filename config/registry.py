"""The registry of study families: what each family contributes, found through one mechanism.

A family is declared by a Python entry point in the group ``hedgelab.families`` (``pyproject.toml``:
``[project.entry-points."hedgelab.families"]``); the entry point names a :class:`Family` (or a callable without
arguments returning one). The in-tree families are declared exactly as a lab's own package would declare its.

A family contributes, each under a name unique across the installed families:

- ``instruments``: item kinds (``surveys.instruments.base.Instrument`` subclasses or instances);
- ``designs``: item generators (``surveys.designs.Design``);
- ``readings``: named ways of reading answers a study may choose (``surveys.report_options.ReportOption``);
- ``metrics``: functions a study file may name in ``[report] metrics``
  (``metric(answers: DataFrame) -> DataFrame``, analysis/reports/metrics.py);
- ``sections``: report sections a study file may name in ``[report] sections`` (a module with ``build(study)``);
- ``exclusion_rules``: rules a study file may name in ``[[exclusions]]`` (``surveys.definition.exclusion_rules.RuleSpec``);
- ``importers``: readers of authors' answer files (``import_model_answers --shape NAME``);
- ``demos``: demo studies ``manage.py load_demo`` creates (a callable without arguments returning a
  ``surveys.demo.outcome.LoadOutcome``; each leaves an existing study of its slug untouched);
- ``datasets``: public reference data ``manage.py fetch_data NAME`` fetches (``analysis.reference_data.Dataset``).

A contribution is the object itself or a reference ``"package.module:attribute"`` (a module alone:
``"package.module"``) resolved on first use, so that declaring a family imports nothing heavy. The registry is
loaded lazily, once, under a lock (:func:`registry`); an entry point that fails to load, that names no Family or
that contributes a name another family already has is a :class:`FamilyError` naming it. This module imports no
family and nothing above ``config``.
"""
from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Callable, Mapping

GROUP = "hedgelab.families"
KINDS = ("instruments", "designs", "readings", "metrics", "sections", "exclusion_rules", "importers", "demos",
         "datasets")


class FamilyError(RuntimeError):
    """A family cannot be loaded, or a lookup names a contribution no installed family makes."""


class UnknownName(FamilyError):
    """A lookup names a contribution no installed family makes."""


_MISSING = object()


@dataclass(frozen=True)
class Family:
    """What one study family contributes (each mapping: name → object or ``"module:attribute"`` reference)."""

    name: str
    summary: str = ""
    order: int = 100  # families are listed (and their contributions offered) by order, then name
    instruments: Mapping[str, Any] = field(default_factory=dict)
    designs: Mapping[str, Any] = field(default_factory=dict)
    readings: Mapping[str, Any] = field(default_factory=dict)
    metrics: Mapping[str, Any] = field(default_factory=dict)
    sections: Mapping[str, Any] = field(default_factory=dict)
    exclusion_rules: Mapping[str, Any] = field(default_factory=dict)
    importers: Mapping[str, Any] = field(default_factory=dict)
    demos: Mapping[str, Any] = field(default_factory=dict)
    datasets: Mapping[str, Any] = field(default_factory=dict)

    def contributions(self, kind: str) -> Mapping[str, Any]:
        if kind not in KINDS:
            raise FamilyError(f"unknown kind of contribution {kind!r}; kinds: {', '.join(KINDS)}")
        return getattr(self, kind)


@dataclass(frozen=True)
class Origin:
    """Where an installed family came from: its entry point, distribution and module."""

    entry_point: str  # "<name> = <package>:FAMILY"
    distribution: str
    version: str
    module: str


@dataclass(frozen=True)
class Contribution:
    kind: str
    name: str
    family: str
    ref: Any

    def describe(self) -> str:
        return self.ref if isinstance(self.ref, str) else f"{type(self.ref).__module__}.{type(self.ref).__qualname__}"


def resolve(ref: Any, what: str) -> Any:
    """The object a reference names (``"module:attribute"`` or ``"module"``); any other value as it is."""
    if not isinstance(ref, str):
        return ref
    module_name, _, attribute = ref.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attribute.split(".") if attribute else ():
            obj = getattr(obj, part)
    except Exception as exc:  # a family's module may fail in any way on import: say whose it is
        raise FamilyError(f"{what}: cannot load {ref!r}: {type(exc).__name__}: {exc}") from exc
    return obj


class Registry:
    """The installed families and their contributions, by kind and name (built by :func:`registry`)."""

    def __init__(self, families: list[tuple[Family, Origin]]):
        self.families: dict[str, tuple[Family, Origin]] = {}
        self._by_kind: dict[str, dict[str, Contribution]] = {kind: {} for kind in KINDS}
        self._loaded: dict[tuple[str, str], Any] = {}
        self._lock = threading.RLock()
        for family, origin in sorted(families, key=lambda pair: (pair[0].order, pair[0].name)):
            self._add(family, origin)

    def _add(self, family: Family, origin: Origin) -> None:
        if family.name in self.families:
            other = self.families[family.name][1]
            raise FamilyError(f"family {family.name!r} is declared twice: by {origin.entry_point!r} "
                              f"({origin.distribution}) and {other.entry_point!r} ({other.distribution})")
        self.families[family.name] = (family, origin)
        for kind in KINDS:
            for name, ref in family.contributions(kind).items():
                taken = self._by_kind[kind].get(name)
                if taken is not None:
                    raise FamilyError(f"family {family.name!r} ({origin.entry_point!r}) contributes {kind[:-1]} "
                                      f"{name!r}, which family {taken.family!r} already contributes")
                self._by_kind[kind][name] = Contribution(kind, name, family.name, ref)

    def names(self, kind: str) -> list[str]:
        """The names contributed of ``kind``: family by family (by ``Family.order``, then name), each family's in
        the order it declares them."""
        return list(self._by_kind[kind])

    def entries(self, kind: str) -> dict[str, Contribution]:
        return dict(self._by_kind[kind])

    def get(self, kind: str, name: str, prepare: Callable[[Any], Any] | None = None) -> Any:
        """The object contributed as ``kind`` ``name``, loaded once (``prepare`` applied once to what the
        reference names, e.g. a class → an instance). FamilyError naming the known ones when none is."""
        key = (kind, name)
        loaded = self._loaded.get(key, _MISSING)
        if loaded is not _MISSING:
            return loaded
        contribution = self._by_kind[kind].get(name)
        if contribution is None:
            raise UnknownName(f"unknown {kind[:-1].replace('_', ' ')} {name!r} (known: "
                              f"{', '.join(self._by_kind[kind]) or 'none'})")
        with self._lock:
            if key not in self._loaded:
                obj = resolve(contribution.ref, f"family {contribution.family!r}, {kind[:-1]} {name!r}")
                self._loaded[key] = prepare(obj) if prepare is not None else obj
            return self._loaded[key]

    def family_of(self, kind: str, name: str) -> str:
        return self._by_kind[kind][name].family


def _origin(entry_point: metadata.EntryPoint) -> Origin:
    dist = getattr(entry_point, "dist", None)
    return Origin(entry_point=f"{entry_point.name} = {entry_point.value}",
                  distribution=dist.metadata["Name"] if dist is not None else "?",
                  version=dist.version if dist is not None else "?",
                  module=entry_point.module)


def load_family(entry_point: metadata.EntryPoint) -> Family:
    """The Family an entry point declares; FamilyError naming the entry point and its distribution otherwise."""
    origin = _origin(entry_point)
    where = f"family entry point {origin.entry_point!r} (distribution {origin.distribution} {origin.version})"
    try:
        obj = entry_point.load()
        if callable(obj) and not isinstance(obj, Family):
            obj = obj()
    except Exception as exc:  # a third party's code: any error it raises is reported with its name
        raise FamilyError(f"{where} failed to load: {type(exc).__name__}: {exc}") from exc
    if not isinstance(obj, Family):
        raise FamilyError(f"{where} names a {type(obj).__name__}, not a config.registry.Family")
    return obj


def discover() -> Registry:
    """A registry of every family the installed distributions declare (group ``hedgelab.families``)."""
    return Registry([(load_family(ep), _origin(ep)) for ep in metadata.entry_points(group=GROUP)])


_lock = threading.RLock()
_registry: Registry | None = None
_discovering = False


def registry() -> Registry:
    """The registry of the installed families, discovered on first use, once (thread-safe). A family whose
    declaration looks the registry up while it is being discovered is a FamilyError (instead of a deadlock)."""
    global _registry, _discovering
    if _registry is None:
        with _lock:
            if _registry is None:
                if _discovering:
                    raise FamilyError("a family's entry point looked up the registry while the families were being "
                                      "discovered: declare contributions as 'module:attribute' references instead "
                                      "of importing them")
                _discovering = True
                try:
                    _registry = discover()
                finally:
                    _discovering = False
    return _registry


def reset() -> None:
    """Forget the registry: the next lookup discovers the families again (tests that install a family)."""
    global _registry
    with _lock:
        _registry = None


def get(kind: str, name: str, prepare: Callable[[Any], Any] | None = None) -> Any:
    """``registry().get(kind, name)``."""
    return registry().get(kind, name, prepare)


def names(kind: str) -> list[str]:
    """``registry().names(kind)``."""
    return registry().names(kind)
