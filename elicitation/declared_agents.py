"""Starting the agents a study's definition declares (``[[agents]]``): ``manage.py elicit SLUG --all-agents``,
``POST /api/studies/{slug}/run-agents/`` and the study admin's "Run the declared agents".

An agent is run once per study version (and, for a study with ``[[factors]]``, once per cell it is asked under:
every cell, or the cells its table names, each run's prompts worded as that cell's pages, the same personas in
every cell): a run of the same agent (``run.agent``) on the study's current
version that is running or done is skipped (and one stopped is left for ``--resume``, unless the agent's table
has changed since: then a new run is started), a draft one is started.
Before anything is created every agent to start is checked (its endpoint exists and is visible, its key is
set, its personas can be had), so a problem with one agent starts none.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from django.core.exceptions import ValidationError

from access.ownership import visible
from surveys.condition_context import cells_of
from surveys.definition import versions
from surveys.models import Study

from . import preflight
from .estimate import Estimate, estimate_run
from .models import ElicitationRun, ModelEndpoint
from .personas import PersonaError, personas_for
from .run_settings import default_temperature
from .runs import RunStateError, create_run, missing_key, start_run

Status = ElicitationRun.Status


class AgentError(ValueError):
    """The declared agents cannot be started; the message names the agent (and its endpoint)."""


@dataclass
class AgentOutcome:
    """What became of one declared agent: ``started`` (its run) or ``skipped`` (why, and the run it has)."""

    agent: str
    action: str
    run: ElicitationRun | None
    reason: str = ""
    cell: str = ""  # a study with [[factors]]: the cell this run asks under (one run per agent and cell)

    def as_dict(self) -> dict[str, Any]:
        out = {"agent": self.agent, "action": self.action, "run": self.run.pk if self.run else None,
               "reason": self.reason}
        if self.cell:
            out["condition"] = self.cell
        return out


def declared(study: Study) -> list[dict[str, Any]]:
    """The agents ``study``'s definition declares, as the file declared them."""
    return list((study.definition or {}).get("agents") or [])


def agent_cells(study: Study, agent: Mapping[str, Any]) -> list[str]:
    """The cells ``agent`` is asked under: those it names (``cells``), else every cell of the study; [""] for a
    study without factors (one run)."""
    return list(agent.get("cells") or []) or cells_of(study.definition) or [""]


def current_run(study: Study, name: str, cell: str = "") -> ElicitationRun | None:
    """The newest run of agent ``name`` (under ``cell``, for a study with factors) on ``study``'s current
    version."""
    version = versions.current_version(study)
    runs = ElicitationRun.objects.filter(study=study, agent=name, condition=cell)
    runs = runs.filter(study_version=version) if version else runs.filter(study_version__isnull=True)
    return runs.order_by("-pk").first()


def run_to_go_on(study: Study, agent: Mapping[str, Any], cell: str = "") -> ElicitationRun | None:
    """The run ``agent`` goes on with: its newest on the current version, unless that one stopped (failed,
    cancelled, out of budget) under settings the file has since changed (e.g. a persona template that did not
    render): then a new run is started and the stopped one is kept as it is. ``cell``: the agent's run under that
    cell (a study with factors)."""
    run = current_run(study, agent["name"], cell)
    stopped = run is not None and run.status not in (Status.DRAFT, Status.RUNNING, Status.COMPLETED)
    if stopped and run.agent_settings != dict(agent):
        return None
    return run


def skip_reason(run: ElicitationRun | None) -> str:
    """Why an agent whose newest run is ``run`` is not started again ("" when it is to be started)."""
    if run is None or run.status == Status.DRAFT:
        return ""
    if run.status == Status.RUNNING:
        return f"running (run {run.pk})"
    if run.status == Status.COMPLETED:
        return f"done (run {run.pk})"
    return f"{run.get_status_display().lower()} (run {run.pk}): carry it on with manage.py elicit --resume {run.pk}"


def _endpoint(agent: Mapping[str, Any], user: Any, need_key: bool = True) -> ModelEndpoint:
    endpoints = ModelEndpoint.objects.all() if user is None else visible(ModelEndpoint.objects.all(), user)
    endpoint = endpoints.filter(name=agent["endpoint"]).first()
    if endpoint is None:
        raise AgentError(f"agent {agent['name']!r}: no endpoint called {agent['endpoint']!r} (register it with "
                         "manage.py add_endpoint, or name another endpoint in the agent's table)")
    if need_key and (problem := missing_key(endpoint)):
        raise AgentError(f"agent {agent['name']!r}: {problem}")
    return endpoint


def _temperature(study: Study, agent: Mapping[str, Any]) -> float:
    if agent.get("temperature") is not None:
        return float(agent["temperature"])
    return default_temperature(study, agent["mode"], agent["prompt_style"])


def _draft(study: Study, agent: Mapping[str, Any], endpoint: ModelEndpoint, personas: list,
           seed: int | None, cell: str = "") -> ElicitationRun:
    """The run ``agent`` would get (under ``cell``), not saved."""
    return ElicitationRun(study=study, endpoint=endpoint, mode=agent["mode"], samples_per_item=agent["samples"],
                          temperature=_temperature(study, agent), seed=agent.get("seed"),
                          few_shot=agent["few_shot"], max_tokens=agent["max_tokens"],
                          prompt_style=agent["prompt_style"], agent=agent["name"], agent_settings=dict(agent),
                          personas=personas, persona_seed=seed, condition=cell)


@dataclass
class AgentEstimate:
    """What starting one declared agent would cost (``estimate``), or why it would be skipped (``reason``)."""

    agent: str
    endpoint: str
    estimate: Estimate | None
    reason: str = ""
    cell: str = ""  # a study with [[factors]]: the cell of this run


def estimate_agents(study: Study, user: Any = None) -> list[AgentEstimate]:
    """The estimate of every agent ``start_agents`` would start now, and the skipped ones with the reason,
    in the file's order. Creates nothing and sends no request (no pre-flight check, no key needed);
    AgentError when an agent's endpoint or personas cannot be had."""
    agents = declared(study)
    if not agents:
        raise AgentError(f"study {study.slug!r} declares no agents (add [[agents]] tables to its definition)")
    found: list[AgentEstimate] = []
    for agent, cell in ((a, c) for a in agents for c in agent_cells(study, a)):  # one run per cell (factors)
        run = run_to_go_on(study, agent, cell)
        if reason := skip_reason(run):
            found.append(AgentEstimate(agent["name"], agent["endpoint"], None, reason, cell))
            continue
        endpoint = _endpoint(agent, user, need_key=False)
        try:
            personas, seed = personas_for(study, agent) if run is None else (run.personas, run.persona_seed)
        except PersonaError as exc:
            raise AgentError(str(exc)) from None
        draft = run if run is not None else _draft(study, agent, endpoint, personas, seed, cell)
        items = None if run is not None else list(study.main_items())
        found.append(AgentEstimate(agent["name"], endpoint.name, estimate_run(draft, items=items), cell=cell))
    return found


def start_agents(study: Study, user: Any = None, *, queue: bool = True, check: bool = True) -> list[AgentOutcome]:
    """Start every agent ``study`` declares that has no run on its current version yet (a draft one is
    started), in the file's order; the others are skipped with the reason. ``user`` (None: anyone) must see
    the endpoints; ``queue=False`` leaves the items for ``run_sync``; ``check`` runs each endpoint's
    pre-flight check once. AgentError, before anything is created, when an agent cannot start."""
    agents = declared(study)
    if not agents:
        raise AgentError(f"study {study.slug!r} declares no agents (add [[agents]] tables to its definition)")
    outcomes: list[AgentOutcome] = []
    todo: list[tuple[dict[str, Any], ElicitationRun | None, ModelEndpoint, list, int | None, str]] = []
    for agent in agents:
        drawn: tuple[list, int | None] | None = None  # one draw of personas, asked in every cell
        for cell in agent_cells(study, agent):
            run = run_to_go_on(study, agent, cell)
            if reason := skip_reason(run):
                outcomes.append(AgentOutcome(agent["name"], "skipped", run, reason, cell))
                continue
            endpoint = _endpoint(agent, user)
            try:
                if run is None:
                    drawn = drawn or personas_for(study, agent)
                personas, seed = drawn if run is None else (run.personas, run.persona_seed)
            except PersonaError as exc:
                raise AgentError(str(exc)) from None
            todo.append((agent, run, endpoint, personas, seed, cell))
    checked: set[int] = set()
    for agent, run, endpoint, personas, seed, cell in todo:
        if endpoint.pk not in checked:
            try:
                preflight.require(endpoint, check)
            except preflight.PreflightFailed as exc:
                raise AgentError(f"agent {agent['name']!r}: {exc}") from None
            checked.add(endpoint.pk)
    for agent, run, endpoint, personas, seed, cell in todo:
        if run is None:
            try:
                run = create_run(study, endpoint, agent["mode"], samples=agent["samples"],
                                 temperature=_temperature(study, agent), seed=agent.get("seed"),
                                 few_shot=agent["few_shot"], max_tokens=agent["max_tokens"],
                                 prompt_style=agent["prompt_style"],
                                 name=f"agent {agent['name']}" + (f" · {cell}" if cell else ""),
                                 created_by=user if getattr(user, "is_authenticated", False) else None,
                                 agent=agent["name"], agent_settings=dict(agent), personas=personas,
                                 persona_seed=seed, condition=cell)
            except ValidationError as exc:
                raise AgentError(f"agent {agent['name']!r}: run not created: {'; '.join(exc.messages)}") from None
        try:
            start_run(run, queue=queue)
        except RunStateError as exc:
            raise AgentError(f"agent {agent['name']!r}: {exc}") from None
        run.refresh_from_db()
        outcomes.append(AgentOutcome(agent["name"], "started", run, cell=cell))
    order = {a["name"]: i for i, a in enumerate(agents)}
    cells = {c: i for i, c in enumerate(cells_of(study.definition))}
    return sorted(outcomes, key=lambda o: (order[o.agent], cells.get(o.cell, 0)))
