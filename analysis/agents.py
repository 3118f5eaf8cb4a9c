"""Which model runs stand for which agent in a report.

An **agent** is a model configuration: the endpoint's name and the mode, plus what changes the answers —
the temperature (always for sampled runs, for other modes when it is not 0), ``zero-shot`` without the
demonstrations, the prompt version when it is not the default and the prompt style when it is not
``standard`` (e.g. ``gpt-4 (greedy, cot)``). The run's own name, id, study and
number of samples are left out, so the same configuration has the same name on a non-verifiable study
and on its verifiable companion and the two rows of the report line up.

A report uses **one run per agent and statement set** (answers of several runs are never pooled: a rerun
of a greedy run would count every answer twice and narrow the confidence intervals). The run used is the
first of, most recent first:

1. a run whose answers cover every expression of the set and that finished without failures;
2. a run whose answers cover every expression of the set (still running, cancelled, stopped or finished
   with failures);
3. a run with any answer — a *partial* run: the one covering the most expressions (or items), then a
   completed one before a cancelled or stopped one; its averages are over what it covers, and the report
   flags it as not comparable.

**Imported runs of one agent in several settings.** Files of one model that answer different items — e.g.
per-setting files (CNC, ENC, FCNC, MCNC, Chinese CNC) imported with ``--set context=…`` — are imported runs of
the same agent: besides the run chosen above (when it is imported), every other imported run of the agent whose
answered items share none with the runs already used is used too, so the agent's answers span its settings
(no answer is counted twice: the items differ). Live runs are chosen as above, one per agent.

The other runs are listed in the report's ``runs`` table with the reason they are not used (the export
keeps every run's answers).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterable

from django.db.models import Count, Q

from elicitation.models import ElicitationRun, ModelResponse
from elicitation.prompt_versions import is_default_prompt_version
from surveys.models import Study

# The base URL of endpoints that stand for models whose answers were imported (never called).
IMPORTED_BASE_URL = "http://imported.invalid/"
ANSWER_STATUSES = (ModelResponse.Status.OK, ModelResponse.Status.UNPARSEABLE)
DEFAULT_PROMPT_STYLE = ElicitationRun._meta.get_field("prompt_style").default


def agent_name(run: ElicitationRun) -> str:
    """The report name of ``run``'s configuration, e.g. ``gpt4o (greedy)``, ``gpt4o (sampled T=1)``,
    ``llama (top_logprobs, zero-shot)``. An imported model is named as the import gave it
    (``gpt-3.5-turbo``), a live endpoint by its name. A run of an agent declared in the study's definition file
    (``[[agents]]``) is named as the file names it."""
    if run.agent:
        return run.agent
    parts = [run.mode]
    if run.mode == ElicitationRun.Mode.SAMPLED or run.temperature:
        parts[0] = f"{run.mode} T={run.temperature:g}"
    if not run.few_shot:
        parts.append("zero-shot")
    if run.prompt_version and not is_default_prompt_version(run.study, run.prompt_version):
        parts.append(f"prompt {run.prompt_version}")
    if run.prompt_style and run.prompt_style != DEFAULT_PROMPT_STYLE:
        parts.append(run.prompt_style)
    label = run.endpoint.model if run.endpoint.base_url == IMPORTED_BASE_URL else run.endpoint.name
    return f"{label} ({', '.join(parts)})"


def agent_names(runs: Iterable[ElicitationRun]) -> dict[int, str]:
    """Run id → agent name (several runs of one configuration share a name)."""
    return {run.pk: agent_name(run) for run in runs}


@dataclass
class RunUse:
    """One run of a study and whether the report uses it for its agent."""

    set: str                 # "nv" or "v"
    study: str
    run_id: int
    run_name: str
    agent: str
    status: str
    samples_per_item: int
    answers: int             # parsed + unparseable
    failed: int
    items_answered: int
    expressions_covered: int
    expressions_total: int
    used: bool = False
    note: str = ""
    condition: str = ""   # a study with [[factors]]: the cell the run asked under (one run used per agent and cell)

    @property
    def covers_all(self) -> bool:
        return self.expressions_total > 0 and self.expressions_covered >= self.expressions_total

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def study_expressions(study: Study) -> set[str]:
    """The expressions of the study's main items (control items are not an expression)."""
    return set(study.main_items().filter(is_control=False).exclude(expression="")
               .values_list("expression", flat=True))


def coverage_field(study: Study) -> str:
    """What a run's coverage is counted in: the items' expressions, or their keys for a kind without
    expressions (WEP choice, intervals, verbalisations)."""
    return "expression" if study_expressions(study) else "key"


def _rank(use: RunUse, created: dict[int, Any]) -> tuple:
    completed = use.status == ElicitationRun.Status.COMPLETED
    return (use.covers_all, use.covers_all and completed and not use.failed, use.expressions_covered, completed,
            created[use.run_id], use.run_id)


def choose_runs(study: Study, set_name: str) -> list[RunUse]:
    """Every run of ``study`` with what it covers, the run used for each agent marked ``used`` (rule in the
    module docstring; for a study with ``[[factors]]``, one per agent and cell), the others with the reason in
    ``note``. Sorted by agent, then newest first."""
    runs = list(ElicitationRun.objects.filter(study=study).select_related("endpoint")
                .annotate(n_answers=Count("responses", filter=Q(responses__status__in=ANSWER_STATUSES,
                                                                responses__check_key="")),
                          n_failed=Count("responses", filter=Q(responses__status=ModelResponse.Status.FAILED)),
                          n_items=Count("responses__item", filter=Q(responses__status__in=ANSWER_STATUSES),
                                        distinct=True)))
    unit = coverage_field(study)
    expressions = (study_expressions(study) if unit == "expression"
                   else set(study.main_items().values_list("key", flat=True)))
    covered: dict[int, set[str]] = {run.pk: set() for run in runs}
    rows = (ModelResponse.objects.filter(run__study=study, status__in=ANSWER_STATUSES, item__is_control=False,
                                         check_key="")
            .values_list("run_id", f"item__{unit}").distinct())
    for run_id, expression in rows:
        if expression in expressions:
            covered[run_id].add(expression)
    created = {run.pk: run.created_at for run in runs}
    imported = {run.pk for run in runs if run.source == ElicitationRun.Source.IMPORTED}
    answered: dict[int, set[int]] = {pk: set() for pk in imported}
    for run_id, item_id in (ModelResponse.objects.filter(run_id__in=imported, status__in=ANSWER_STATUSES, check_key="")
                            .values_list("run_id", "item_id").distinct()):
        answered[run_id].add(item_id)
    uses = [RunUse(set=set_name, study=study.slug, run_id=run.pk, run_name=run.name or str(run), agent=agent_name(run),
                   status=run.status, samples_per_item=run.samples_per_item, answers=run.n_answers,
                   failed=run.n_failed, items_answered=run.n_items, expressions_covered=len(covered[run.pk]),
                   expressions_total=len(expressions), condition=run.condition)
            for run in runs]
    by_agent: dict[tuple[str, str], list[RunUse]] = {}
    for use in uses:
        by_agent.setdefault((use.agent, use.condition), []).append(use)
    ordered: list[RunUse] = []
    for key in sorted(by_agent):
        agent = key[0] + (f" under {key[1]}" if key[1] else "")
        group = sorted(by_agent[key], key=lambda u: _rank(u, created), reverse=True)
        with_answers = [u for u in group if u.answers]
        chosen = with_answers[0] if with_answers else None
        settings = _other_settings(chosen, with_answers, imported, answered)
        for use in group:
            if use.run_id in settings:
                use.used = True
                use.note = (f"used with run {chosen.run_id} for {agent}: an imported run of other items "
                            "(another setting)")
            elif use is chosen:
                use.used = True
                if not use.covers_all:
                    use.note = (f"partial: answers cover {use.expressions_covered} of {use.expressions_total} "
                                f"{'expressions' if unit == 'expression' else 'items'}; not comparable")
            elif not use.answers:
                use.note = "no answers yet"
            else:
                use.note = f"not used: run {chosen.run_id} stands for {agent}"
        ordered += sorted(group, key=lambda u: (created[u.run_id], u.run_id), reverse=True)
    return ordered


def _other_settings(chosen: RunUse | None, candidates: list[RunUse], imported: set[int],
                    answered: dict[int, set[int]]) -> set[int]:
    """The imported runs used beside ``chosen`` for its agent: those whose items share none with the runs
    already used, in rank order (module docstring)."""
    if chosen is None or chosen.run_id not in imported:
        return set()
    taken, extra = set(answered[chosen.run_id]), set()
    for use in candidates:
        if use is chosen or use.run_id not in imported or answered[use.run_id] & taken:
            continue
        extra.add(use.run_id)
        taken |= answered[use.run_id]
    return extra


def used_run_ids(uses: Iterable[RunUse]) -> list[int]:
    """The ids of the runs a report uses."""
    return [u.run_id for u in uses if u.used]
