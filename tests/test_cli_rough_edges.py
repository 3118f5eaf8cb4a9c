"""Command-line rough edges of issue 32 point 10: the example file a command's --help names exists; load_study
says "agents updated" (not "unchanged") when only the declared agents changed; export_study writes no setting of
the expression-and-controls draw into a study that has no use for it."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command, get_commands, load_command_class

from agent_studies import EXAMPLE, agent, example_text
from surveys.definition.export import export, export_to
from surveys.definition.loader import load_file

ROOT = Path(__file__).resolve().parent.parent
OWN_APPS = ("surveys", "elicitation", "analysis", "prolific", "access")


def test_every_file_a_commands_help_names_exists(monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # no path broken over two lines
    named = {}
    for name, app in get_commands().items():
        if app.split(".")[0] not in OWN_APPS:
            continue
        command = load_command_class(app, name)
        text = command.create_parser("manage.py", name).format_help()
        for path in re.findall(r"\b(?:studies|tests|examples|docs)/[\w./-]+\.\w+", text):
            named[path] = name
    assert "studies/examples/hedge-confidence/study.toml" in named  # load_study's example
    assert [f"{command}: {path}" for path, command in named.items() if not (ROOT / path).exists()] == []


def load_text(tmp_path: Path, text: str) -> str:
    path = tmp_path / "study.toml"
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    call_command("load_study", str(path), stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_load_study_says_agents_updated_when_only_the_agents_changed(tmp_path):
    (tmp_path / "items.csv").write_bytes((EXAMPLE.parent / "items.csv").read_bytes())
    first = load_text(tmp_path, example_text([agent("one")]))
    assert "created: version 1" in first and "agents:" not in first
    assert "unchanged: version 1" in load_text(tmp_path, example_text([agent("one")]))
    added = load_text(tmp_path, example_text([agent("one"), agent("two", mode="sampled", samples=2)]))
    assert "agents updated: version 1" in added and "agents: added two (" in added and "unchanged" not in added
    changed = load_text(tmp_path, example_text([agent("two", mode="sampled", samples=3)]))
    assert "agents updated: version 1" in changed and "agents: removed one; changed two" in changed


@pytest.mark.django_db
@pytest.mark.parametrize("study, used", [("examples/word-choice", False), ("tang-rq2", False), ("belem", True)])
def test_export_study_writes_the_draw_settings_only_where_they_apply(tmp_path, study, used):
    loaded = load_file(ROOT / "studies" / study / "study.toml")
    text, _ = export(loaded.study)
    keys = ("items_per_expression", "controls_per_participant", "draw_speaker_names")
    assert [key in text for key in keys] == [used] * 3
    export_to(loaded.study, tmp_path / "out")  # and the file loads again to the same version
    again = load_file(tmp_path / "out" / "study.toml", slug=loaded.study.slug)
    assert again.version == loaded.version and not again.new_version


@pytest.mark.django_db
def test_a_setting_changed_from_its_default_is_exported_even_where_unused(tmp_path):
    loaded = load_file(ROOT / "studies" / "examples" / "word-choice" / "study.toml")
    loaded.study.controls_per_participant = 0
    loaded.study.save()
    text, _ = export(loaded.study)
    assert "controls_per_participant = 0" in text and "items_per_expression" not in text
