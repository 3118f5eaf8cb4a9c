"""A study's wording from its definition: what templates see, and the prompt assembled from its templates.

The page (``[page]``: ``sentence``, ``question``, ``hints``) and the prompt (``[prompt]``) are Jinja2 templates
over one item's fields (:func:`item_fields`) and the kind's computed fields (``Instrument.template_context``).
Named texts of ``[wording]`` are visible to every template as ``wording.NAME``.

The prompt (:func:`assemble_prompt`), for the style's templates (standard ones where a style sets none):
- ``block``: one question; for a demonstration ``with_answer`` is true and ``answer`` holds its written answer
  (the ``answer`` template);
- ``system``: the chat prompt's first message (over ``demos``, the demonstrations' blocks, and ``shots``);
- ``text``: the whole completions prompt (over ``system``, ``demos``, ``question``, ``shots``);
- ``user``: the chat prompt's last message (over the same);
- chat demonstrations are a user turn (the block without its answer) answered by the assistant (``answer``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from .templates import render

if TYPE_CHECKING:  # pragma: no cover
    from surveys.models import Item

# Item columns templates never see (ids and bookkeeping); ``extra`` is merged in instead.
HIDDEN_COLUMNS = frozenset({"id", "study", "extra", "source_row"})
PROMPT_KEYS = ("system", "block", "text", "user", "answer")


def item_fields(item: "Item") -> dict[str, Any]:
    """An item's fields by name, as templates and reports see them: its model columns, then ``extra``'s keys
    (free-form fields of the item file; a column of the same name wins)."""
    fields = {key: value for key, value in item.extra.items()} if isinstance(item.extra, dict) else {}
    for field in item._meta.concrete_fields:
        if field.name not in HIDDEN_COLUMNS:
            fields[field.name] = getattr(item, field.attname)
    return fields


def completed(own: Mapping[str, Any], shipped: Mapping[str, Any]) -> Mapping[str, Any]:
    """A study's definition ``own`` with what it leaves unworded taken from its kind's ``shipped`` one: the page
    when ``own`` words none, the prompt likewise (plus the prompt styles ``own`` declares), and the named texts
    ``own`` does not name. ``own`` when there is
    nothing shipped, ``shipped`` when ``own`` is empty."""
    if not shipped:
        return own
    if not own:
        return shipped
    merged = dict(own)
    merged["wording"] = {**(shipped.get("wording") or {}), **(own.get("wording") or {})}
    if not has_page(own):
        merged["page"] = shipped.get("page") or {}
    if not has_prompt(own):  # the shipped prompt, with the styles ``own`` adds or rewords
        prompt = dict(shipped.get("prompt") or {})
        prompt["styles"] = {**(prompt.get("styles") or {}), **((own.get("prompt") or {}).get("styles") or {})}
        merged["prompt"] = prompt
    return merged


def style_templates(prompt: Mapping[str, Any], style: str) -> dict[str, str | None]:
    """The prompt templates of ``style``: ``[prompt.styles.STYLE]``'s, the standard ones where it sets none."""
    base = {key: prompt.get(key) for key in PROMPT_KEYS}
    override = (prompt.get("styles") or {}).get(style) or {}
    return {key: override.get(key) if override.get(key) is not None else base[key] for key in PROMPT_KEYS}


def has_prompt(definition: Mapping[str, Any]) -> bool:
    """Whether ``definition`` words its prompt (a ``[prompt]`` block template)."""
    return bool((definition.get("prompt") or {}).get("block"))


def has_page(definition: Mapping[str, Any]) -> bool:
    """Whether ``definition`` words its participant page (a ``[page]`` question or sentence template)."""
    page = definition.get("page") or {}
    return bool(page.get("question") or page.get("sentence"))


def page_text(definition: Mapping[str, Any], context: Mapping[str, Any]) -> dict[str, Any]:
    """``sentence``, ``question`` and ``hints`` of one item's page, rendered over ``context``."""
    page = definition.get("page") or {}
    return {
        "sentence": render(page.get("sentence") or "", context),
        "question": render(page.get("question") or "", context),
        "hints": [render(hint, context) for hint in page.get("hints") or ()],
    }


def assemble_prompt(definition: Mapping[str, Any], style: str, context: Mapping[str, Any],
                    demonstrations: Sequence[Mapping[str, Any]]) -> tuple[str, list[dict[str, str]], int]:
    """(completions text, chat messages, shots) of one item's prompt from ``definition``'s templates.

    ``context``: the item's template context; ``demonstrations``: each demonstration's template context (the
    caller leaves them out for a zero-shot prompt)."""
    templates = style_templates(definition.get("prompt") or {}, style)
    block = templates["block"] or ""
    answer_template = templates["answer"] or "{{ answer }}"
    answers = [render(answer_template, demo) for demo in demonstrations]
    demo_blocks = [render(block, {**demo, "with_answer": True, "answer": written})
                   for demo, written in zip(demonstrations, answers)]
    question = render(block, {**context, "with_answer": False, "answer": ""})
    common = {**context, "demos": demo_blocks, "question": question, "shots": len(demonstrations)}
    system = render(templates["system"] or "", common)
    common["system"] = system
    text = render(templates["text"] or "{{ question }}", common)
    user = render(templates["user"] or "{{ question }}", common)
    messages = [{"role": "system", "content": system}] if system else []
    for demo, written in zip(demonstrations, answers):
        messages.append({"role": "user", "content": render(block, {**demo, "with_answer": False, "answer": ""})})
        messages.append({"role": "assistant", "content": written})
    messages.append({"role": "user", "content": user})
    return text, messages, len(demonstrations)


def demo_contexts(demonstrations: Sequence["Item"], context_of: Callable[["Item"], dict[str, Any]]) -> list[dict[str, Any]]:
    """Each demonstration's template context, with ``answer`` its shown answer (``demo_answer`` or, for a
    choice kind, the ``demo_choice`` in ``extra``)."""
    out = []
    for demo in demonstrations:
        context = context_of(demo)
        context.setdefault("answer", demo.demo_answer if demo.demo_answer is not None else demo.extra.get("demo_choice", ""))
        out.append(context)
    return out
