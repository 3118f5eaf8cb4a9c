"""The wording baseline (issue 20's regression contract): the studies of tests/data/prompt-baseline/README.md,
built the same way, say exactly what they said: every prompt's chat and completions hash (as stored with a model
answer) and every page's sentence, question, hints and options.

One test per study (``pytest tests/test_prompt_baseline.py -k tang-zh``); by hand, with counts:
``python tests/data/prompt-baseline/compare.py --study tang-zh``. A wording change an issue asks for is
regenerated for its study only (tests/data/prompt-baseline/regenerate.py) and noted in the README.
"""
from __future__ import annotations

import json

import pytest

import prompt_baseline as baseline
from surveys.definition.files import shipped_definition

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("study", baseline.STUDIES)
def test_wording_matches_the_baseline(study):
    baseline.build_studies([study])
    comparisons = baseline.compare_study(study)
    failed = [baseline.describe(c) for c in comparisons if not c.ok]
    if failed:
        pytest.fail("wording differs from tests/data/prompt-baseline (regenerate only what an issue asked for: "
                    "see its README)\n" + "\n".join(failed), pytrace=False)
    assert all(c.matching for c in comparisons)  # the study has rows of each file


@pytest.mark.parametrize("study", ["tang-zh"])
def test_examples_are_the_rows_they_show(study):
    """examples.json, which the failure message quotes as the expected text, is what the rows hash."""
    baseline.build_studies([study])
    assert baseline.read_examples()[study] == baseline.example_rows(study)


def test_the_baseline_holds_exactly_the_studies_built():
    """No study of the files goes unchecked, and every study the test builds has rows."""
    for path in (baseline.PROMPTS, baseline.PAGES):
        assert sorted({row["study"] for row in baseline.read_jsonl(path)}) == sorted(baseline.STUDIES), path
    assert sorted(baseline.read_examples()) == sorted(baseline.STUDIES)


def test_a_changed_wording_fails_with_the_expected_and_the_new_text(monkeypatch):
    """A full-width colon in the Chinese answer cue (the kind of change issue 23.12 made to the catalogue)
    changes every tang-zh prompt and no page; the message shows the text before (examples.json) and now."""
    baseline.build_studies(["tang-zh"])
    monkeypatch.setitem(shipped_definition("tang-rq1-zh/study.toml")["wording"], "answer_cue", "答案：")
    prompts, pages = baseline.compare_study("tang-zh")
    assert (prompts.matching, len(prompts.differing)) == (0, 510)
    assert pages.ok and pages.matching == 255
    message = baseline.describe(prompts)
    assert "tang-zh prompts: 0 matching, 510 differing" in message
    assert "text, expected (examples.json) → now:" in message
    assert "      | -答案:\n      | +答案：" in message  # the text's diff


def test_regenerating_one_study_rewrites_its_rows_only(tmp_path, monkeypatch):
    """regenerate.py's core: the named study's rows are replaced in place, every other line is kept."""
    original_examples = baseline.read_examples()
    for name in ("PROMPTS", "PAGES", "EXAMPLES"):
        copy = tmp_path / getattr(baseline, name).name
        copy.write_bytes(getattr(baseline, name).read_bytes())
        monkeypatch.setattr(baseline, name, copy)
    before = {path: path.read_text(encoding="utf-8").splitlines() for path in (baseline.PROMPTS, baseline.PAGES)}
    baseline.build_studies(["tang-zh", "sileo-r"])
    assert baseline.regenerate(["tang-zh"]) == {"tang-zh": (510, 255)}
    for path, lines in before.items():  # unchanged wording: byte for byte the same files
        assert path.read_text(encoding="utf-8").splitlines() == lines
    monkeypatch.setitem(shipped_definition("tang-rq1-zh/study.toml")["wording"], "answer_cue", "答案：")
    baseline.regenerate(["tang-zh"])
    after = baseline.PROMPTS.read_text(encoding="utf-8").splitlines()
    changed = [i for i, (old, new) in enumerate(zip(before[baseline.PROMPTS], after)) if old != new]
    assert len(after) == len(before[baseline.PROMPTS])
    assert {json.loads(after[i])["study"] for i in changed} == {"tang-zh"} and len(changed) == 510
    assert baseline.PAGES.read_text(encoding="utf-8").splitlines() == before[baseline.PAGES]
    examples = baseline.read_examples()
    assert all("答案：" in row["text"] for row in examples["tang-zh"])
    assert {slug: rows for slug, rows in examples.items() if slug != "tang-zh"} == {
        slug: rows for slug, rows in original_examples.items() if slug != "tang-zh"}
    assert baseline.compare_study("tang-zh")[0].ok and baseline.compare_study("sileo-r")[0].ok


def test_replace_rows_places_a_new_study_by_its_slug():
    lines = [json.dumps({"study": s, "item": i}) + "\n" for s, i in (("a", 1), ("a", 2), ("c", 1))]
    assert baseline.replace_rows(lines, "b", [{"study": "b", "item": 9}]) == [
        lines[0], lines[1], '{"item": 9, "study": "b"}\n', lines[2]]
    assert baseline.replace_rows(lines, "a", [{"study": "a", "item": 3}]) == ['{"item": 3, "study": "a"}\n', lines[2]]
