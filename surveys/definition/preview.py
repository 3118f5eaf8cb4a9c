"""What a definition's first items look like to a participant and to a model, without writing (``check_study``)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from surveys.blocks import block_names
from surveys.condition_context import cells_of
from surveys.models import Study
from surveys.question_kinds import asking_kind, asks_together
from surveys.questions import question_kind, questions_of, several

from .loader import load, files_beside
from .errors import DefinitionError, Problem
from .scratch_db import database_ready, scratch_database


def _option_text(option) -> str:
    """One answer option as the page offers it: ``A: is likely``, ``4 (Half sure)``, ``50``."""
    if isinstance(option, dict):
        value, label = option.get("value", option.get("key", "")), option.get("label") or option.get("text") or ""
        return f"{value} ({label})" if label else str(value)
    if hasattr(option, "key"):
        return f"{option.key}: {option.text}"
    return f"{option:g}" if isinstance(option, float) else str(option)


def _answers_text(page: dict) -> str:
    """What the page lets a participant answer: its options, a slider's range and marks (not its every value),
    or free text and its length."""
    scale = page.get("scale")
    if scale and str(page.get("widget", "")).endswith("slider.html"):
        marks = ", ".join(f"{m['value']} ({m['label']})" for m in scale["labels"])
        return (f"a slider from {scale['min']} to {scale['max']} in steps of {scale['step']}"
                + (f", marked {marks}" if marks else ""))
    if page.get("max_length"):
        return f"free text, up to {page['max_length']} characters"
    return " | ".join(_option_text(o) for o in page.get("options") or [])


def design_lines(study: Study) -> list[str]:
    """The cells and blocks a study with ``[[factors]]`` or ``[blocks]`` declares (the pages below are the first
    cell's)."""
    definition = study.definition or {}
    lines = []
    cells = cells_of(definition)
    if cells:
        conditions = definition.get("conditions") or {}
        lines.append(f"cells ({conditions.get('assignment', 'balanced')}): {', '.join(cells)}; the pages and prompts "
                     f"below are in cell {cells[0]}")
    if definition.get("blocks"):
        blocks = definition["blocks"]
        lines.append(f"blocks by {blocks['field']!r} ({blocks['order']}, items {blocks['within']} within): "
                     f"{', '.join(block_names(study))}")
    return lines


def page_lines(study: Study, item) -> list[str]:
    """An item's participant page in words: its sentence, question, hints and answers; with ``[[questions]]``
    the sentence and hints once, then each question (its key, wording, whether optional, its answers)."""
    if not several(study):
        page = study.kind.page_context(item)
        lines = [page["sentence"], page["question"], *[f"  · {hint}" for hint in page["hints"]]]
        answers = _answers_text(page)
        return lines + ([f"  answers: {answers}"] if answers else [])
    lines: list[str] = []
    for number, question in enumerate(questions_of(study)):
        page = question_kind(study, question).page_context(item)
        if number == 0:
            lines += [page["sentence"], *[f"  · {hint}" for hint in page["hints"]]]
        optional = "" if question.required else " (optional)"
        lines += [f"[{question.key}]{optional} {page['question']}", f"  answers: {_answers_text(page)}"]
    return lines


def describe(study: Study, count: int = 2, style: str = "standard") -> str:
    """The page and the prompt (completions text and chat messages) of ``study``'s first ``count`` items."""
    kind = study.kind
    if style not in kind.prompt_styles:
        raise DefinitionError([Problem(study.slug, "--style", f"no prompt style {style!r} (this study's: "
                                       f"{', '.join(kind.prompt_styles)})")])
    demos = study.demonstrations()
    lines = [f"study {study.slug!r}: kind {study.instrument}, {study.main_items().count()} items, "
             f"{len(demos)} demonstrations, prompt styles: {', '.join(kind.prompt_styles)}"]
    for field in (study.definition.get("questionnaire") or []):
        lines.append(f"questionnaire ({field['when']}): {field['name']} [{field['type']}] {field['label']}")
    lines += design_lines(study)
    for item in study.main_items().order_by("id")[:count]:
        lines += ["", f"── item {item.key} ── participant page", *page_lines(study, item)]
        for label, asking in prompt_kinds(study, kind):
            prompt = asking.build_prompt(item, demos, few_shot=True, style=style)
            lines += ["", f"── item {item.key}{label} ── prompt ({style}, {prompt.shots} demonstrations), "
                          "completions text:", prompt.text, "", "chat messages:"]
            lines += [f"[{m['role']}] {m['content']}" for m in prompt.messages]
    return "\n".join(lines)


def prompt_kinds(study: Study, kind: Any) -> list[tuple[str, Any]]:
    """The kinds whose prompts a model is asked for each item, with a label, as the worker asks them
    (surveys.question_kinds.asking_kind): the study's own for its one question; with ``[[questions]]`` asked
    separately, each question's; asked together, the one prompt for all of them."""
    if not several(study):
        return [("", kind)]
    if asks_together(study):
        keys = [question.key for question in questions_of(study)]
        return [(f" [{', '.join(keys)} together]", asking_kind(study, keys[0]))]
    return [(f" [{question.key}]", asking_kind(study, question.key)) for question in questions_of(study)]


def preview_file(path: str | Path, count: int = 2, style: str = "standard") -> str:
    """Check the definition at ``path`` (everything load_study checks) and describe its first items; nothing is
    written. Without a migrated database the file is checked in a scratch one (scratch_db), and the one check
    that needs the project's database (the reference study) is named as not done."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DefinitionError([Problem(str(path), "", "no such file")]) from None

    def check(database: bool):
        return load(raw, str(path), files_beside(path), commit=False, new_version=True, check_reference=database,
                    inspect=lambda study: describe(study, count, style))

    if database_ready():
        return check(True).inspected
    with scratch_database():
        loaded = check(False)
    reference = loaded.study.definition["study"].get("reference")
    if reference:
        return loaded.inspected + (f"\nstudy.reference {reference!r}: not checked, it needs the project's database "
                                   "(run manage.py migrate, then load_study the reference study)")
    return loaded.inspected
