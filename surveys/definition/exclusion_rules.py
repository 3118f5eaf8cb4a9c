"""The exclusion rules a study file may name in ``[[exclusions]]`` (no Django import: the definition schema
validates against them; analysis/exclusions.py computes them). The installed families contribute them
(config.registry, kind ``exclusion_rules``); the core's own (generic) are declared here, a family's in its package.

Each rule has a name, what it excludes (in words), its parameters (name → type, whether required, default,
bounds) and the answer shapes it can be computed for. ``params_problems`` checks one declared rule's keys;
``shape_problem`` whether a study's answers allow it (check_study refuses a rule it cannot compute).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from config import registry


@dataclass(frozen=True)
class Param:
    name: str
    type: type  # int or float
    help: str
    required: bool = False
    default: float | int | None = None
    low: float | None = None  # inclusive bounds
    high: float | None = None


@dataclass(frozen=True)
class RuleSpec:
    name: str
    summary: str
    params: tuple[Param, ...] = ()
    one_of: tuple[str, ...] = ()  # exactly one of these parameters must be given
    shapes: tuple[str, ...] | None = None  # the answer shapes it can be computed for (None: any)
    needs_checks: bool = False
    needs_expressions: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    # "module:function" computing it: judge(study, params, done, result) -> {participant id: what it measured}
    # for the participants it excludes (analysis/exclusions.py); done = [(id, _, started, completed)]
    judge: str = ""
    judges_nobody_done: bool = False  # called even without completed participants (it raises what it misses)
    # An attention filter: the rule a study's ``[participants] attention_filter`` turns on (with the study's
    # ``attention_threshold`` as its ``threshold``) for a kind that names it (``Instrument.attention_rule``), or for
    # any kind naming none when ``attention_filter`` is set. ``outcome``: "module:function" computing it without
    # storing, outcome(study, threshold) -> an object with ``decisions`` ({participant id: (measure, included)}),
    # ``describe()``, ``as_dict(raw_ids)``, ``report_lines()`` and ``store()`` (analysis/exclusions.py).
    attention_filter: bool = False
    outcome: str = ""


FAILED_CHECKS = RuleSpec(
    "failed-checks", "failed at least `at_least` of the study's [[checks]]",
    (Param("at_least", int, "failed checks that exclude a participant", default=1, low=1),),
    needs_checks=True, judge="analysis.exclusions:failed_checks")
TOO_FAST = RuleSpec(
    "too-fast", "answered faster than a floor: the whole study (first page to completion) in under "
    "`total_seconds`, or a median time per item page under `median_item_seconds`",
    (Param("total_seconds", float, "least time for the whole study, in seconds", low=0),
     Param("median_item_seconds", float, "least median time per item page, in seconds", low=0)),
    one_of=("total_seconds", "median_item_seconds"), judge="analysis.exclusions:too_fast")
STRAIGHT_LINING = RuleSpec(
    "straight-lining", "gave the same answer to at least `percent` % of their items",
    (Param("percent", float, "share of items with the participant's most frequent answer", required=True,
           low=1, high=100),
     Param("min_items", int, "only participants with at least this many answers are judged", default=3,
           low=2)),
    shapes=("scale", "choice", "pick"), judge="analysis.exclusions:straight_lining")
MISSING_ANSWERS = RuleSpec(
    "missing-answers", "left more than `percent` % of their items without an answer",
    (Param("percent", float, "largest share of unanswered items kept", required=True, low=0, high=100),),
    judge="analysis.exclusions:missing_answers")


def rules() -> dict[str, RuleSpec]:
    """Every installed family's exclusion rules by name (config.registry, kind ``exclusion_rules``)."""
    return {name: registry.get("exclusion_rules", name) for name in registry.names("exclusion_rules")}


def rule_names() -> tuple[str, ...]:
    """The names of the installed exclusion rules."""
    return tuple(registry.names("exclusion_rules"))


def attention_rule(named: str = "") -> str | None:
    """The exclusion rule a study's attention filter applies: ``named`` (its kind's ``attention_rule``) if given,
    else the first installed rule that is an attention filter (``RuleSpec.attention_filter``); None without one."""
    if named:
        return named
    return next((name for name, spec in rules().items() if spec.attention_filter), None)


def params_problems(rule: str, given: dict[str, Any]) -> list[tuple[str, str]]:
    """(key, message) for every parameter problem of one declared rule (unknown rule, a parameter it does not
    take, a missing or out-of-range one)."""
    spec = rules().get(rule)
    if spec is None:
        return [("rule", f"unknown rule {rule!r}; known: {', '.join(rule_names())}")]
    out = []
    taken = {p.name: p for p in spec.params}
    for key, value in given.items():
        if value is None:
            continue
        param = taken.get(key)
        if param is None:
            out.append((key, f"rule {rule!r} takes no {key!r} (it takes: {', '.join(taken) or 'nothing'})"))
            continue
        if param.type is int and (isinstance(value, bool) or not float(value).is_integer()):
            out.append((key, f"{key} must be a whole number"))
        elif (param.low is not None and value < param.low) or (param.high is not None and value > param.high):
            bounds = f"{param.low:g}" if param.high is None else f"{param.low:g}–{param.high:g}"
            out.append((key, f"{key} must be {'at least ' if param.high is None else 'in '}{bounds}"))
    for param in spec.params:
        if param.required and given.get(param.name) is None:
            out.append((param.name, f"rule {rule!r} needs {param.name} ({param.help})"))
    if spec.one_of and sum(given.get(name) is not None for name in spec.one_of) != 1:
        out.append((spec.one_of[0], f"rule {rule!r} needs exactly one of {' or '.join(spec.one_of)}"))
    return out


def resolved(rule: str, given: dict[str, Any]) -> dict[str, Any]:
    """The rule's parameters: those given, the others at their defaults (unset optional ones left out)."""
    spec = rules()[rule]
    out = {}
    for param in spec.params:
        value = given.get(param.name, param.default)
        if value is not None:
            out[param.name] = param.type(value)
    return out


def describe(rule: str, params: dict[str, Any]) -> str:
    """The rule with its parameters, in words (``too-fast (median_item_seconds = 2)``)."""
    shown = ", ".join(f"{k} = {v:g}" if isinstance(v, (int, float)) else f"{k} = {v}" for k, v in params.items())
    return f"{rule} ({shown})" if shown else rule


def shape_problem(rule: str, shape: str, has_checks: bool, has_expressions: bool) -> str | None:
    """Why ``rule`` cannot be computed for a study with answers of ``shape`` (and checks, expressions), or None."""
    spec = rules()[rule]
    if spec.shapes is not None and shape not in spec.shapes:
        return (f"rule {rule!r} cannot be computed for {shape!r} answers (it needs "
                f"{' or '.join(spec.shapes)} answers)")
    if spec.needs_checks and not has_checks:
        return f"rule {rule!r} needs [[checks]]: the study declares none"
    if spec.needs_expressions and not has_expressions:
        return (f"rule {rule!r} ranks the items' expressions: the study's items have no "
                "`expression` to rank")
    return None
