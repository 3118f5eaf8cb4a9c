"""The core names no study family (issue 34 point 1): no module of the core packages (migrations aside) imports
the ``families`` package or spells a family's name — in code, strings, help texts, docstrings or comments.

A family's logic lives in its package (families/<name>/) and reaches the core only through config.registry; the
core names what a family contributes by the name a study file or a kind declares (``attention_rule``,
``report_sections``), never by spelling it. Pure file reading (no Django, no import of the modules).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ("config", "access", "surveys", "prolific", "elicitation", "analysis")
FAMILIES = ("belem", "tang", "bahaj", "sileo")

# A family's name as a word or inside an identifier or kind (belem-ranking, tang-rq2, BELEM_RAW, report_tang_rq1,
# isTang), never inside another word ("rectangle", "tangent").
NAME = re.compile(r"(?i:belem|bahaj|sileo)"
                  r"|(?<![A-Za-z])[Tt]ang(?![a-z])|(?<=[a-z])Tang(?![a-z])"
                  r"|(?<![A-Z])TANG(?![A-Z])")



def core_modules() -> list[Path]:
    return sorted(path for package in CORE for path in (ROOT / package).rglob("*.py")
                  if "migrations" not in path.relative_to(ROOT).parts)


def relative(path: Path, root: Path = ROOT) -> str:
    return path.relative_to(root).as_posix()


def name_problems(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line: text`` for each line of ``path`` that spells a family's name."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [f"{relative(path, root)}:{n}: {line.strip()}" for n, line in enumerate(lines, 1) if NAME.search(line)]


def import_problems(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line: import ...`` for each import of the ``families`` package (or a module in it) in ``path``,
    wherever it stands (module level, inside a function, under ``if TYPE_CHECKING:``)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        hits = [name for name in names if name == "families" or name.startswith("families.")]
        if hits:
            out.append(f"{relative(path, root)}:{node.lineno}: import {', '.join(hits)}")
    return out


def test_the_pattern_finds_names_and_only_names():
    found = ["belem-ranking", "BELEM_RAW", "Belem et al.", "tang-rq2", "Tang's bins", "report_tang_rq1", "isTang",
             "TANG_RQ2", "bahaj_hints", "Sileo & Moens", "families.tang.metrics"]
    not_found = ["rectangle", "Rectangle", "tangent", "Tangent", "TANGENT", "stang", "tango"]
    assert [text for text in found if not NAME.search(text)] == []
    assert [text for text in not_found if NAME.search(text)] == []


def test_the_check_fails_on_a_name_and_an_import(tmp_path):
    module = tmp_path / "surveys" / "example.py"
    module.parent.mkdir()
    module.write_text('"""Scored as in Tang et al."""\nfrom families.belem import report\n'
                      'def f():\n    import families\n', encoding="utf-8")
    assert name_problems(module, tmp_path) == ['surveys/example.py:1: """Scored as in Tang et al."""',
                                               "surveys/example.py:2: from families.belem import report"]
    assert import_problems(module, tmp_path) == ["surveys/example.py:2: import families.belem",
                                                 "surveys/example.py:4: import families"]


def test_the_core_spells_no_family_name():
    problems = [p for path in core_modules() for p in name_problems(path)]
    assert not problems, ("core modules name a study family (move the family's logic to families/<name>/ and reach "
                          "it through config.registry; describe a method instead of citing its paper):\n"
                          + "\n".join(problems))


def test_the_core_imports_no_family():
    problems = [p for path in core_modules() for p in import_problems(path)]
    assert not problems, "core modules import the families package:\n" + "\n".join(problems)
