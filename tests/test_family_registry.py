"""The registry of study families (config/registry.py): found through entry points, loaded once and thread-safe,
clear errors for a broken family; a study file names sections and metrics from it; ``manage.py families``."""
from __future__ import annotations

import io
import json
import sys
import threading
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from config import registry
from config.registry import Family, FamilyError, Origin, Registry

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def fresh_registry():
    """Forget the registry before and after: the test may change what is installed (sys.path)."""
    registry.reset()
    yield
    registry.reset()


def add_distribution(root: Path, name: str, entry_points: str) -> None:
    """An installed distribution's metadata (``NAME-1.0.dist-info``) with ``entry_points`` under ``root``."""
    info = root / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[hedgelab.families]\n{entry_points}\n", encoding="utf-8")


def test_the_in_tree_families_are_entry_points_of_the_hedgelab_distribution():
    reg = registry.registry()
    assert list(reg.families) == ["belem", "tang", "bahaj", "sileo", "generic"]
    assert {origin.distribution for _, origin in reg.families.values()} == {"hedgelab"}
    assert reg.families["tang"][1].module == "families.tang"
    # the order the platform always offered them in (admin, API, schema)
    assert reg.names("instruments") == ["speaker_belief", "wep_probability", "wep_choice", "interval_confidence",
                                        "verbalisation_choice", "generic"]
    assert reg.names("designs") == ["tang-rq1", "tang-rq2", "bahaj-hints", "wep-reasoning"]
    assert set(reg.names("sections")) == {"belem", "tang_rq1", "tang_rq2", "bahaj", "sileo", "generic", "metrics"}
    assert reg.family_of("exclusion_rules", "belem-ranking") == "belem"
    assert reg.names("importers") == ["tang-rq2"]


def test_lookups_go_through_the_registry():
    from surveys.definition.exclusion_rules import rules
    from analysis.report_sections import section_module
    from surveys.designs import get_design
    from surveys.instruments import get_instrument

    assert get_instrument("wep_choice") is get_instrument("wep_choice")  # one instance, made once
    assert type(get_instrument("wep_choice")).__name__ == "WepChoice"
    assert get_design("bahaj-hints").module == "families.bahaj.design"
    assert section_module("belem", "s").__name__ == "families.belem.report"
    assert rules()["belem-ranking"].judge == "families.belem.attention:judge"
    # a family in its own package (issue 34 point 1): everything it contributes is found there
    assert get_design("wep-reasoning").module == "families.sileo.design"
    assert section_module("sileo", "s").__name__ == "families.sileo.report"
    assert type(get_instrument("verbalisation_choice")).__module__ == "families.sileo.instrument"
    # in the families' order: belem (10), bahaj (30), sileo (40)
    assert registry.registry().names("demos") == ["demo", "demo-verifiable", "demo-overprecision", "demo-sileo"]
    assert type(get_instrument("speaker_belief")).__module__ == "families.belem.instrument"
    assert registry.get("demos", "demo-sileo").__module__ == "families.sileo.demo"
    assert section_module("bahaj", "s").__name__ == "families.bahaj.report"
    assert type(get_instrument("interval_confidence")).__module__ == "families.bahaj.instrument"
    assert registry.get("demos", "demo-overprecision").__module__ == "families.bahaj.demo"
    with pytest.raises(KeyError, match="unknown instrument 'nope'; known: .*speaker_belief"):
        get_instrument("nope")


def test_a_contribution_two_families_make_is_refused_naming_both():
    origin = Origin("x = x:F", "dist-x", "1", "x")
    with pytest.raises(FamilyError, match="family 'b' .*contributes metric 'm', which family 'a' already"):
        Registry([(Family("a", metrics={"m": len}), origin), (Family("b", metrics={"m": max}), origin)])
    with pytest.raises(FamilyError, match="family 'a' is declared twice"):
        Registry([(Family("a"), origin), (Family("a"), origin)])


def test_a_reference_that_does_not_load_names_the_family_and_the_contribution():
    reg = Registry([(Family("lab", metrics={"m": "no_such_module_xyz:m"}), Origin("lab = lab:F", "lab", "1", "lab"))])
    with pytest.raises(FamilyError, match="family 'lab', metric 'm': cannot load 'no_such_module_xyz:m'"):
        reg.get("metrics", "m")
    with pytest.raises(FamilyError, match=r"unknown metric 'x' \(known: m\)"):
        reg.get("metrics", "x")


def test_a_broken_third_party_entry_point_is_a_clear_error_naming_it(tmp_path, monkeypatch, fresh_registry):
    add_distribution(tmp_path, "broken_lab", "broken = broken_lab_family_xyz:FAMILY")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(FamilyError, match=r"family entry point 'broken = broken_lab_family_xyz:FAMILY' "
                                          r"\(distribution broken_lab 1.0\) failed to load: ModuleNotFoundError"):
        registry.registry()
    out = io.StringIO()
    from django.core.management.base import CommandError
    with pytest.raises(CommandError, match="broken = broken_lab_family_xyz:FAMILY"):
        call_command("families", stdout=out)


def test_an_entry_point_naming_no_family_is_refused(tmp_path, monkeypatch, fresh_registry):
    add_distribution(tmp_path, "odd_lab", "odd = json:dumps")  # a callable: called, returns no Family
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(FamilyError, match="'odd = json:dumps' .*odd_lab.*failed to load: TypeError"):
        registry.registry()
    (tmp_path / "odd_lab-1.0.dist-info" / "entry_points.txt").write_text("[hedgelab.families]\nodd = json:decoder\n")
    registry.reset()
    with pytest.raises(FamilyError, match="'odd = json:decoder' .*names a module, not a config.registry.Family"):
        registry.registry()


def test_the_registry_is_discovered_once_under_concurrent_first_use(monkeypatch, fresh_registry):
    calls = []
    real = registry.discover

    def slow_discover():
        calls.append(1)
        time.sleep(0.2)
        return real()

    monkeypatch.setattr(registry, "discover", slow_discover)
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(registry.registry())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len({id(r) for r in seen}) == 1 and len(seen) == 8


def test_a_family_that_looks_the_registry_up_while_loading_is_an_error_not_a_deadlock(monkeypatch, fresh_registry):
    monkeypatch.setattr(registry, "discover", lambda: registry.registry())
    with pytest.raises(FamilyError, match="while the families were being discovered"):
        registry.registry()


def test_families_command_lists_origin_and_contributions():
    out = io.StringIO()
    call_command("families", stdout=out)
    text = out.getvalue()
    assert "tang: Tang et al." in text
    assert "  from: hedgelab 0.1.0, module families.tang (entry point tang = families.tang:FAMILY)" in text
    assert "  designs: tang-rq1, tang-rq2" in text and "  importers: tang-rq2" in text
    out = io.StringIO()
    call_command("families", "--json", stdout=out)
    data = {f["name"]: f for f in json.loads(out.getvalue())}
    assert data["generic"]["module"] == "analysis.family"
    assert data["belem"]["contributes"]["exclusion_rules"] == {"belem-ranking": "families.belem.rules:BELEM_RANKING"}


def test_families_command_lists_the_hooks_each_item_kind_sets():
    """The hooks the core reads from an item kind (its report sections, attention filter, refinement, ...) are
    listed under its family, so a reader sees that Bahaj's intervals can be refined without reading the code."""
    out = io.StringIO()
    call_command("families", stdout=out)
    text = out.getvalue()
    assert "  interval_confidence refinement: families.bahaj.refinement_hook:REFINEMENT" in text
    assert "  speaker_belief attention filter: belem-ranking, on by default" in text
    assert "  wep_probability attention filter: belem-ranking, off by default" in text
    assert "  wep_probability report sections: belem, tang_rq1" in text
    out = io.StringIO()
    call_command("families", "--json", stdout=out)
    data = {f["name"]: f for f in json.loads(out.getvalue())}
    assert data["bahaj"]["instrument_hooks"]["interval_confidence"] == {
        "report sections": "bahaj", "prompt version prefix": "bahaj",
        "refinement": "families.bahaj.refinement_hook:REFINEMENT"}
    assert data["generic"]["instrument_hooks"] == {"generic": {}}  # the generic kind sets none of them


def test_the_core_names_no_lab_family():
    core = [p for d in ("config", "access", "surveys", "elicitation", "analysis", "prolific", "families")
            for p in (ROOT / d).rglob("*.py")]
    assert core and not [p for p in core if "hedgelab_lab_example" in p.read_text(encoding="utf-8")]
