"""The persona preamble of a prompt: the agent's persona ``template`` rendered over one persona's fields (the
definition's sandboxed Jinja2, surveys/definition/templates.py), put in the system message (first in a
completions prompt) or before the first user message's text. It is part of what is sent, so of the prompt hash;
a run without personas never comes here (its prompts are byte for byte those of before)."""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from surveys.definition.templates import render
from surveys.instruments import Prompt

SEPARATOR = "\n\n"


def preamble(template: str, fields: Mapping[str, Any]) -> str:
    """The persona's text: ``template`` rendered over its fields."""
    return render(template, dict(fields))


def with_preamble(prompt: Prompt, text: str, placement: str) -> Prompt:
    """``prompt`` with ``text`` put first in its system message (``system``; a system message is added when it
    has none) or before its first user message's text (``user``); the completions text starts with it either
    way (it has no messages to choose from)."""
    messages = [dict(m) for m in prompt.messages]
    role = "system" if placement == "system" else "user"
    target = next((m for m in messages if m.get("role") == role), None)
    if target is not None:
        target["content"] = text + SEPARATOR + target["content"] if target.get("content") else text
    elif messages:
        messages.insert(0 if role == "system" else len(messages), {"role": role, "content": text})
    return dataclasses.replace(prompt, text=text + SEPARATOR + prompt.text, messages=messages)


def persona_prompt(run: Any, prompt: Prompt, persona_index: int) -> Prompt:
    """``prompt`` of ``run`` as its persona ``persona_index`` is asked it."""
    settings = (run.agent_settings or {}).get("persona") or {}
    fields = run.personas[persona_index]["fields"]
    return with_preamble(prompt, preamble(settings["template"], fields), settings.get("placement", "system"))
