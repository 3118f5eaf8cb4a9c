"""The wording baseline (tests/data/prompt-baseline/): build its studies, compute their rows, compare.

What the platform says to participants (pages) and models (prompts) for the studies the baseline's README lists,
computed with the platform's own functions (``elicitation.prompts.build_prompt``, ``prompt_content``,
``prompt_hash``; the instrument's ``page_context``), so the comparison checks what is really shown and stored.
Used by tests/test_prompt_baseline.py, compare.py and regenerate.py beside the baseline.
"""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

BASELINE_DIR = Path(__file__).resolve().parent / "data" / "prompt-baseline"
PROMPTS = BASELINE_DIR / "prompts.jsonl"
PAGES = BASELINE_DIR / "pages.jsonl"
EXAMPLES = BASELINE_DIR / "examples.json"

# How each study is built, exactly as the baseline's README says (manage.py commands; argv lists).
DEMO_STUDIES: tuple[str, ...] = ("demo", "demo-verifiable", "demo-overprecision", "demo-sileo")
BUILT_STUDIES: dict[str, tuple[list[str], list[str]]] = {
    "tang-en": (["create_study", "tang-en", "--instrument", "wep_probability"],
                ["generate_items", "tang-en", "--design", "tang-rq1"]),
    "tang-zh": (["create_study", "tang-zh", "--instrument", "wep_probability"],
                ["generate_items", "tang-zh", "--design", "tang-rq1", "--language", "zh", "--contexts", "CNC"]),
    "tang-rq2": (["create_study", "tang-rq2", "--instrument", "wep_choice"],
                 ["generate_items", "tang-rq2", "--design", "tang-rq2", "--seed", "0"]),
    "sileo-r": (["create_study", "sileo-r", "--instrument", "verbalisation_choice"],
                ["generate_items", "sileo-r", "--design", "wep-reasoning", "--hops", "2", "--n", "40", "--seed", "0"]),
}
STUDIES: tuple[str, ...] = DEMO_STUDIES + tuple(BUILT_STUDIES)
SKIPPED_STYLES = frozenset({"refine", "authors-refine"})  # built from a source run's answers, not from the item alone

PROMPT_KEY = ("study", "item", "style", "few_shot")
PAGE_KEY = ("study", "item")
Row = dict[str, Any]


# --- building -------------------------------------------------------------------------------------------------
def build_studies(slugs: Iterable[str]) -> None:
    """Create the named studies in the current database as the README says (``load_demo`` once for any demo
    study; ``create_study`` + ``generate_items`` for the others). Output of the commands is discarded."""
    from io import StringIO

    from django.core.management import call_command

    slugs = list(slugs)
    unknown = sorted(set(slugs) - set(STUDIES))
    if unknown:
        raise ValueError(f"unknown baseline studies {unknown}; known: {', '.join(STUDIES)}")
    if any(slug in DEMO_STUDIES for slug in slugs):
        call_command("load_demo", "--no-links", stdout=StringIO())
    for slug in slugs:
        for argv in BUILT_STUDIES.get(slug, ()):
            call_command(*argv, stdout=StringIO())


# --- computing ------------------------------------------------------------------------------------------------
def _items(study: Any) -> list[Any]:
    return sorted(study.main_items(), key=lambda item: item.key)


def prompt_rows(slug: str) -> list[Row]:
    """One row per item × prompt style (all the kind declares but ``refine``) × few_shot (False, True): the
    chat and completions hashes of the prompt as the platform sends and stores it."""
    return [row for row, _ in _prompt_rows(slug)]


def _prompt_rows(slug: str) -> Iterator[tuple[Row, dict[str, Any]]]:
    from elicitation.models import ModelEndpoint
    from elicitation.prompts import build_prompt, prompt_content, prompt_hash
    from surveys.models import Study

    study = Study.objects.get(slug=slug)
    kind = study.kind
    demonstrations = study.demonstrations()
    for item in _items(study):
        for style in kind.prompt_styles:
            if style in SKIPPED_STYLES:
                continue
            for few_shot in (False, True):
                prompt = build_prompt(study, item, few_shot, demonstrations, style)
                chat = prompt_content(prompt, ModelEndpoint.ApiStyle.CHAT)
                text = prompt_content(prompt, ModelEndpoint.ApiStyle.COMPLETIONS)
                row = {"chat_sha256": prompt_hash(chat), "few_shot": few_shot, "instrument": kind.name,
                       "item": item.key, "study": slug, "style": style, "text_sha256": prompt_hash(text)}
                yield row, {"messages": chat, "text": text}


def page_rows(slug: str) -> list[Row]:
    """One row per item: what a participant reads (the instrument's ``page_context``; ``options`` as
    ``[key, text]`` of the item's labelled options, none for scale kinds)."""
    from surveys.models import Study

    study = Study.objects.get(slug=slug)
    kind = study.kind
    rows = []
    for item in _items(study):
        page = kind.page_context(item)
        rows.append({"hints": list(page["hints"]), "item": item.key,
                     "options": [[option.key, option.text] for option in kind.options(item)],
                     "question": page["question"], "sentence": page["sentence"], "study": slug})
    return rows


def example_rows(slug: str, items: int = 2) -> list[Row]:
    """examples.json's rows of ``slug``: the full messages and text of its first ``items`` items (by key)."""
    keys = {item.key for item in _items_of(slug)[:items]}
    return [{**row, **content} for row, content in _prompt_rows(slug) if row["item"] in keys]


def _items_of(slug: str) -> list[Any]:
    from surveys.models import Study

    return _items(Study.objects.get(slug=slug))


# --- reading and comparing ------------------------------------------------------------------------------------
def read_jsonl(path: Path, studies: Iterable[str] | None = None) -> list[Row]:
    """The rows of a baseline file (of ``studies`` only, when given)."""
    wanted = None if studies is None else set(studies)
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [row for row in rows if wanted is None or row["study"] in wanted]


def read_examples() -> dict[str, list[Row]]:
    """examples.json ({} when it is absent)."""
    if not EXAMPLES.exists():
        return {}
    return json.loads(EXAMPLES.read_text(encoding="utf-8"))


def jsonl_line(row: Row) -> str:
    """A row as the baseline writes it: key-sorted JSON, non-ASCII kept."""
    return json.dumps(row, ensure_ascii=False, sort_keys=True)


@dataclass
class Comparison:
    """Baseline rows against computed rows of one file and one study, matched by key."""

    study: str
    what: str  # "prompts" or "pages"
    matching: int = 0
    differing: list[tuple[Row, Row]] = field(default_factory=list)
    missing: list[Row] = field(default_factory=list)  # in the baseline, not computed
    extra: list[Row] = field(default_factory=list)  # computed, not in the baseline

    @property
    def ok(self) -> bool:
        return not (self.differing or self.missing or self.extra)

    def summary(self) -> str:
        return (f"{self.study} {self.what}: {self.matching} matching, {len(self.differing)} differing, "
                f"{len(self.missing)} missing, {len(self.extra)} extra")


def compare(study: str, what: str, expected: list[Row], got: list[Row], key: tuple[str, ...]) -> Comparison:
    """Row by row, matched by ``key``."""
    result = Comparison(study, what)
    by_key = {tuple(row[k] for k in key): row for row in got}
    seen = set()
    for row in expected:
        k = tuple(row[name] for name in key)
        seen.add(k)
        if k not in by_key:
            result.missing.append(row)
        elif by_key[k] == row:
            result.matching += 1
        else:
            result.differing.append((row, by_key[k]))
    result.extra = [row for k, row in by_key.items() if k not in seen]
    return result


def compare_study(slug: str) -> tuple[Comparison, Comparison]:
    """(prompts, pages) comparisons of one built study against the baseline files."""
    return (compare(slug, "prompts", read_jsonl(PROMPTS, [slug]), prompt_rows(slug), PROMPT_KEY),
            compare(slug, "pages", read_jsonl(PAGES, [slug]), page_rows(slug), PAGE_KEY))


def describe(comparison: Comparison, limit: int = 3) -> str:
    """The summary and the first differing rows, with the expected and the computed text side by side
    (a prompt's full text from examples.json when it holds the row; otherwise the hashes and the text now)."""
    lines = [comparison.summary()]
    examples = read_examples().get(comparison.study, []) if comparison.what == "prompts" else []
    for expected, got in comparison.differing[:limit]:
        lines.append(f"- {comparison.what} row {_key_text(expected)}:")
        fields = sorted(name for name in set(expected) | set(got) if expected.get(name) != got.get(name))
        for name in fields:
            lines.append(f"    {name}:\n      expected: {_show(expected.get(name))}\n      got:      {_show(got.get(name))}")
        if comparison.what == "prompts":
            lines.extend(_prompt_texts(comparison.study, expected, examples))
    for label, rows in (("missing (in the baseline, not built now)", comparison.missing),
                        ("extra (built now, not in the baseline)", comparison.extra)):
        if rows:
            lines.append(f"- {label}: " + "; ".join(_key_text(row) for row in rows[:limit])
                         + (" …" if len(rows) > limit else ""))
    return "\n".join(lines)


def _key_text(row: Row) -> str:
    return " | ".join(f"{name}={row[name]!r}" for name in PROMPT_KEY if name in row)


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _prompt_texts(slug: str, expected: Row, examples: list[Row]) -> list[str]:
    """The prompt's text now, as a diff against the text examples.json holds for the row (its first two items)."""
    key = tuple(expected[k] for k in PROMPT_KEY)
    shown = next((e for e in examples if tuple(e[k] for k in PROMPT_KEY) == key), None)
    now = next((content for _, content in _prompt_rows_of_item(slug, expected)), None)
    if now is None:
        return []
    if shown is None:
        return ["    text now (examples.json holds only the first two items by key, so no expected text):",
                _indent(now["text"])]
    if shown["text"] != now["text"]:
        return ["    text, expected (examples.json) → now:", _indent(_diff(shown["text"], now["text"]))]
    return ["    text unchanged; messages, expected (examples.json) → now:",
            _indent(_diff(_messages(shown["messages"]), _messages(now["messages"])))]


def _diff(expected: str, now: str) -> str:
    lines = difflib.unified_diff(expected.split("\n"), now.split("\n"), "expected", "now", n=2, lineterm="")
    return "\n".join(lines)


def _messages(messages: list[dict[str, str]]) -> str:
    return json.dumps(messages, ensure_ascii=False, indent=1, sort_keys=True)


def _prompt_rows_of_item(slug: str, expected: Row) -> Iterator[tuple[Row, dict[str, Any]]]:
    from elicitation.models import ModelEndpoint
    from elicitation.prompts import build_prompt, prompt_content
    from surveys.models import Study

    study = Study.objects.get(slug=slug)
    item = study.main_items().filter(key=expected["item"]).first()
    if item is None:
        return
    prompt = build_prompt(study, item, expected["few_shot"], style=expected["style"])
    yield expected, {"messages": prompt_content(prompt, ModelEndpoint.ApiStyle.CHAT),
                     "text": prompt_content(prompt, ModelEndpoint.ApiStyle.COMPLETIONS)}


def _indent(text: str) -> str:
    return "\n".join("      | " + line for line in text.split("\n"))


# --- regenerating the rows of named studies ---------------------------------------------------------------------
def replace_rows(lines: list[str], slug: str, rows: list[Row]) -> list[str]:
    """A JSONL file's lines with those of study ``slug`` replaced by ``rows`` (written as the baseline writes
    them), at the place the study's first line held; every other line is kept byte for byte. A study the file
    does not hold yet goes where its slug sorts among the others (the files are sorted by study)."""
    new = [jsonl_line(row) + "\n" for row in rows]
    studies = [json.loads(line)["study"] for line in lines]
    at = next((i for i, study in enumerate(studies) if study == slug), None)
    if at is None:
        at = next((i for i, study in enumerate(studies) if study > slug), len(lines))
    kept = [line for line, study in zip(lines, studies) if study != slug]
    before = sum(1 for study in studies[:at] if study != slug)
    return kept[:before] + new + kept[before:]


def examples_text(examples: dict[str, list[Row]]) -> str:
    """examples.json as the baseline writes it (key-sorted, indented by one, non-ASCII kept, no final newline)."""
    return json.dumps(dict(sorted(examples.items())), ensure_ascii=False, indent=1, sort_keys=True)


def regenerate(slugs: Iterable[str]) -> dict[str, tuple[int, int]]:
    """Rewrite the baseline rows of the named (built) studies from today's wording: their lines in
    prompts.jsonl and pages.jsonl and their entries in examples.json; nothing else changes. Returns, per study,
    (prompt rows, page rows) written."""
    written = {}
    files = {PROMPTS: prompt_rows, PAGES: page_rows}
    texts = {path: path.read_text(encoding="utf-8").splitlines(keepends=True) for path in files}
    examples = read_examples()
    for slug in slugs:
        counts = []
        for path, compute in files.items():
            rows = compute(slug)
            texts[path] = replace_rows(texts[path], slug, rows)
            counts.append(len(rows))
        examples[slug] = example_rows(slug)
        written[slug] = (counts[0], counts[1])
    for path, lines in texts.items():
        path.write_text("".join(lines), encoding="utf-8")
    EXAMPLES.write_text(examples_text(examples), encoding="utf-8")
    return written


# --- a throw-away database for the scripts beside the baseline ------------------------------------------------
def in_test_database(work: Callable[[], Any]) -> Any:
    """Run ``work`` in a fresh test database (Django's test database of the configured engine: SQLite in
    memory by default), destroyed afterwards; the configured database itself is never written."""
    import os
    import sys

    root = BASELINE_DIR.parent.parent.parent
    sys.path.insert(0, str(root))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_test_environment, teardown_test_environment

    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        return work()
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        teardown_test_environment()
