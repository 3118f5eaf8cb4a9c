"""The checks of a definition's ``[[agents]]`` that need more than one table: names unique, prompt styles the
study's kind has, persona templates and people over the questionnaire's fields. Each problem names its key path
(``agents[0].persona.template``)."""
from __future__ import annotations

from typing import Any, Mapping

from .errors import Problem
from .schema import repeated
from .templates import TemplateProblem, render, template_fields

ONE_ANSWER_MODES = ("greedy", "top_logprobs", "full_distribution", "likelihood")


def agent_problems(dump: Mapping[str, Any], prompt_styles: tuple[str, ...], file: str) -> list[Problem]:
    """Every problem of the definition's agents (``dump`` as the schema dumps it; ``prompt_styles`` the
    study's kind's, its file's own styles included)."""
    agents = dump.get("agents") or []
    fields = {f["name"]: f for f in dump.get("questionnaire") or []}
    problems: list[Problem] = []
    names = [a["name"] for a in agents]
    for name in repeated(names):
        where = [i for i, n in enumerate(names) if n == name]
        problems.append(Problem(file, f"agents[{where[1]}].name", f"agent name {name!r} is used more than once "
                                f"(agents[{', '.join(map(str, where))}]); each agent needs its own name"))
    for i, agent in enumerate(agents):
        at = f"agents[{i}]"
        if agent["prompt_style"] not in prompt_styles:
            problems.append(Problem(file, f"{at}.prompt_style", f"unknown prompt style {agent['prompt_style']!r} "
                                    f"for this study's kind (known: {', '.join(prompt_styles)})"))
        if agent["mode"] in ONE_ANSWER_MODES and agent["samples"] != 1:
            problems.append(Problem(file, f"{at}.samples", f"the {agent['mode']} mode gives one answer per item: "
                                    "set samples = 1 (or mode = \"sampled\")"))
        if agent.get("persona") and agent["mode"] == "likelihood":
            problems.append(Problem(file, f"{at}.persona", "the likelihood mode scores the item's texts without a "
                                    "prompt: a persona has nowhere to go (use another mode, or no persona)"))
        elif agent.get("persona"):
            problems += _persona_problems(agent["persona"], fields, f"{at}.persona", file)
    return problems


def _persona_problems(persona: Mapping[str, Any], fields: Mapping[str, Any], at: str, file: str) -> list[Problem]:
    problems: list[Problem] = []
    try:
        used = template_fields(persona["template"])
    except TemplateProblem as exc:
        return [Problem(file, f"{at}.template", f"the template does not parse: {exc}")]
    unknown = sorted(used - set(fields))
    if unknown:
        known = ", ".join(fields) or "none: add a [[questionnaire]]"
        problems.append(Problem(file, f"{at}.template", f"names {', '.join(map(repr, unknown))}, not questionnaire "
                                f"field{'s' if len(unknown) > 1 else ''} (the questionnaire's: {known})"))
    if persona.get("from") == "participants" and not fields:
        problems.append(Problem(file, f"{at}.from", "personas from participants need a [[questionnaire]] whose "
                                "answers they take"))
    elif persona.get("from") == "participants" and not unknown:
        sample = {name: sample_value(fields[name]) for name in used}
        try:  # rendered as each run will render it (sandboxed, strict), over sample answers
            render(persona["template"], sample)
        except TemplateProblem as exc:
            shown = ", ".join(f"{k}={v!r}" for k, v in sorted(sample.items())) or "no fields"
            problems.append(Problem(file, f"{at}.template", f"the template does not render (with sample "
                                    f"questionnaire answers {shown}): {exc}"))
    for k, person in enumerate(persona.get("people") or []):
        where = f"{at}.people[{k}]"
        for key, value in person.items():
            if key not in fields:
                problems.append(Problem(file, f"{where}.{key}", f"{key!r} is not a questionnaire field"))
            elif (problem := _value_problem(fields[key], value)):
                problems.append(Problem(file, f"{where}.{key}", problem))
        missing = sorted(used & set(fields) - set(person))
        if missing:
            problems.append(Problem(file, where, f"lacks {', '.join(map(repr, missing))}, which the template names"))
        elif not unknown:
            try:
                render(persona["template"], person)
            except TemplateProblem as exc:
                problems.append(Problem(file, where, f"the template does not render for this persona: {exc}"))
    return problems


def sample_value(field: Mapping[str, Any]) -> Any:
    """An answer the questionnaire ``field`` could have: its first choice, a number in its range, a word."""
    if field["type"] == "choice":
        return field["choices"][0]["key"]
    if field["type"] == "number":
        low, high = field.get("min"), field.get("max")
        value = low if low is not None else (high if high is not None else 30)
        return int(value) if field.get("integer") else float(value)
    return "sample answer"


def _value_problem(field: Mapping[str, Any], value: Any) -> str:
    """Why ``value`` is not an answer the questionnaire ``field`` could have ("" when it could)."""
    if field["type"] == "choice":
        keys = [c["key"] for c in field["choices"]]
        return "" if value in keys else f"{value!r} is not one of the choices ({', '.join(keys)})"
    if field["type"] == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{value!r} is not a number"
        if field.get("min") is not None and value < field["min"] or field.get("max") is not None and value > field["max"]:
            return f"{value!r} lies outside the field's range"
        return ""
    return "" if isinstance(value, str) else f"{value!r} is not text"
