"""python manage.py elicit <study> --endpoint NAME --mode greedy [...] [--wait | --sync]
python manage.py elicit <study> --all-agents [--wait | --sync]
python manage.py elicit --resume RUN [--wait | --sync] | --cancel RUN | --status RUN"""
from __future__ import annotations

import time
from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from access.cli import add_as_argument, acting_user, scoped
from elicitation import conf
from elicitation.estimate import estimate_run
from elicitation import preflight
from elicitation.declared_agents import AgentError, AgentOutcome, estimate_agents, start_agents
from elicitation.likelihood import LikelihoodUnavailable, check_endpoint
from elicitation.models import ElicitationRun, ModelEndpoint
from elicitation.run_settings import default_temperature
from elicitation.runs import (BROKER_UNAVAILABLE, RunStateError, cancel_run, create_run, missing_key, progress,
                              resume_run, run_sync, start_run)
from surveys.cli import get_study, lookup
from surveys.definition.templates import TemplateProblem

Status = ElicitationRun.Status


class Command(BaseCommand):
    help = ("Pose a study's items to a model endpoint in the background (Celery workers), or in this "
            "process with --sync. Prints the estimated tokens and cost first.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("study", nargs="?", help="slug of the study whose items are posed")
        parser.add_argument("--endpoint", help="name of a registered endpoint (see add_endpoint)")
        parser.add_argument("--all-agents", action="store_true",
                            help="start every agent the study's definition declares ([[agents]]) that has no run "
                                 "on the study's current version yet (those running or done are skipped)")
        parser.add_argument("--mode", default="greedy", choices=[m for m, _ in ElicitationRun.Mode.choices])
        parser.add_argument("--samples", type=int, default=1, help="answers per item (sampled mode)")
        parser.add_argument("--temperature", type=float, help="sampling temperature (sampled mode; default 1.0, none "
                                                                 "sent for prompt styles run at the provider's "
                                                                 "default such as authors-vanilla)")
        parser.add_argument("--seed", type=int, help="seed sent where the endpoint takes one (+ sample index)")
        parser.add_argument("--items", help="comma-separated item keys (default: all main items)")
        parser.add_argument("--zero-shot", action="store_true",
                            help="leave out the study's demonstrations (kinds whose prompts show them)")
        parser.add_argument("--max-tokens", type=int, default=8)
        parser.add_argument("--top-logprobs", type=int, default=20)
        parser.add_argument("--budget", help="stop cleanly once the cost reaches this many USD")
        parser.add_argument("--name", default="")
        parser.add_argument("--condition", default="", metavar="CELL",
                            help="a study with [[factors]]: the cell the run asks under (default: the first cell)")
        parser.add_argument("--prompt-version", help="label stored with the run")
        parser.add_argument("--prompt-style", default="standard",
                            help="one of the study's kind's prompt styles (e.g. standard or cot for wep_choice)")
        parser.add_argument("--estimate-only", action="store_true",
                            help="print the estimate (of each agent to start with --all-agents, of the answers "
                                 "still to get with --resume); create, start and send nothing")
        parser.add_argument("--resume", type=int, metavar="RUN", help="carry on a stopped or failed run")
        parser.add_argument("--cancel", type=int, metavar="RUN", help="cancel a run (answers so far are kept)")
        parser.add_argument("--status", type=int, metavar="RUN", help="print a run's progress")
        parser.add_argument("--wait", action="store_true", help="show a progress bar until the run ends")
        parser.add_argument("--sync", action="store_true", help="answer in this process, without a worker")
        parser.add_argument("--no-check", action="store_true",
                            help="skip the endpoint's pre-flight check (one cheap request before the run is created)")

    # --- entry -------------------------------------------------------------------------------
    def handle(self, *args, **o):
        if o["cancel"]:
            return self._cancel(self._run(o["cancel"], acting_user(o)))
        if o["status"]:
            return self._print_progress(self._run(o["status"], acting_user(o)))
        if o["all_agents"]:
            return self._all_agents(o)
        if o["resume"]:
            run = self._run(o["resume"], acting_user(o))
            try:
                self._print_estimate(run, left_only=True)  # builds a prompt: a run whose prompts fail stops here
            except TemplateProblem as exc:
                raise CommandError(self._unbuildable(run, exc)) from None
            if o["estimate_only"]:
                return None
            self._check(run.endpoint, o)
            try:
                queued = resume_run(run, queue=not o["sync"])
            except RunStateError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"resumed run {run.pk}: {len(queued)} item(s) with answers still to get")
        else:
            run = self._create(o)
            if run is None:
                return
            return self._start(run, o)
        return self._follow(run, o)

    @staticmethod
    def _unbuildable(run: ElicitationRun, exc: Exception) -> str:
        """Why ``run`` cannot be resumed: its prompts cannot be built, and what to do instead."""
        advice = ("fix the study file and load it again, then start a new run")
        if run.agent:
            advice = (f"a run keeps the agent's settings it was created with: fix agent {run.agent!r} in the study "
                      f"file, load it, and start it anew with manage.py elicit {run.study.slug} --all-agents (run "
                      f"{run.pk} is kept as it is)")
        return f"run {run.pk} cannot be resumed: its prompts cannot be built ({exc}); {advice}"

    def _start(self, run: ElicitationRun, o: dict) -> None:
        """Start ``run`` (in this process with ``--sync``), then follow it as ``o`` asks."""
        try:
            queued = start_run(run, queue=not o["sync"])
        except RunStateError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"started run {run.pk}: {len(queued)} item(s)")
        return self._follow(run, o)

    def _follow(self, run: ElicitationRun, o: dict) -> None:
        """Answer ``run`` here (``--sync``), or say where its progress is (and show it with ``--wait``)."""
        run.refresh_from_db()
        if o["sync"]:
            return self._sync(run)
        where = (f"progress: .venv/bin/python manage.py elicit --status {run.pk} "
                 f"or /admin/elicitation/elicitationrun/{run.pk}/monitor/")
        if run.status_reason == BROKER_UNAVAILABLE:
            self.stdout.write(self.style.WARNING(f"run {run.pk}: {BROKER_UNAVAILABLE}; {where}"))
        else:
            self.stdout.write(f"queued on Celery queue {conf.queue()!r}; {where}")
        if o["wait"]:
            self._wait(run)

    def _all_agents(self, o: dict) -> None:
        """Start the study's declared agents, then answer them here (``--sync``) or follow them (``--wait``),
        one progress line per agent."""
        if not o["study"]:
            raise CommandError("give a study slug: manage.py elicit SLUG --all-agents")
        study = get_study(o["study"], acting_user(o))
        if o["estimate_only"]:
            return self._estimate_agents(study, o)
        try:
            outcomes = start_agents(study, acting_user(o), queue=not o["sync"], check=not o["no_check"])
        except AgentError as exc:
            raise CommandError(str(exc)) from None
        for outcome in outcomes:
            if outcome.action == "started":
                self.stdout.write(f"agent {outcome.agent}{_under(outcome)}: started run {outcome.run.pk} "
                                  f"({outcome.run.mode} on {outcome.run.endpoint.name})")
            else:
                self.stdout.write(f"agent {outcome.agent}{_under(outcome)}: skipped, {outcome.reason}")
        started = [o_ for o_ in outcomes if o_.action == "started"]
        if o["sync"]:
            for outcome in started:
                run_sync(outcome.run)
        elif o["wait"]:
            self._wait_agents(started)
        self._agents_progress(outcomes)
        if any(outcome.run.status == Status.FAILED for outcome in started):
            raise CommandError("some agents' runs finished with failures; --resume RUN retries them")

    def _estimate_agents(self, study, o: dict) -> None:
        """One estimate line per agent that ``--all-agents`` would start (the others: why not); nothing is
        created and no request is sent (no pre-flight check either)."""
        try:
            found = estimate_agents(study, acting_user(o))
        except AgentError as exc:
            raise CommandError(str(exc)) from None
        for agent in found:
            if agent.estimate is None:
                self.stdout.write(f"agent {agent.agent}: would be skipped, {agent.reason}")
            else:
                self.stdout.write(f"agent {agent.agent} on {agent.endpoint}: " + self._estimate_text(agent.estimate))
        self.stdout.write("estimate only: no run created, no request sent")

    def _agents_progress(self, outcomes: list[AgentOutcome]) -> None:
        """One line per agent: its run's status and counts."""
        for outcome in outcomes:
            if outcome.run is None:
                continue
            outcome.run.refresh_from_db()
            p = progress(outcome.run, failures=0)
            self.stdout.write(f"  {outcome.agent + _under(outcome):<24} run {outcome.run.pk} [{p['status_display']}] "
                              f"{p['done']}/{p['total']} done, {p['failed']} failed, {p['pending']} pending; "
                              f"cost ${p['cost_usd']}")

    def _wait_agents(self, started: list[AgentOutcome], poll: float = 2.0) -> None:
        """Poll the started runs until none is running, printing their lines when the figures change."""
        last = None
        try:
            while True:
                for outcome in started:
                    outcome.run.refresh_from_db()
                figures = [(o_.run.status, progress(o_.run, failures=0)["done"]) for o_ in started]
                if figures != last:
                    self._agents_progress(started)
                    last = figures
                if all(o_.run.status != Status.RUNNING for o_ in started):
                    return
                time.sleep(poll)
        except KeyboardInterrupt:
            self.stdout.write("stopped watching; the runs go on in the workers")

    # --- pieces ------------------------------------------------------------------------------
    def _check(self, endpoint: ModelEndpoint, o: dict) -> None:
        """The endpoint's pre-flight check (elicitation.preflight), unless ``--no-check``."""
        try:
            preflight.require(endpoint, check=not o["no_check"])
        except preflight.PreflightFailed as exc:
            raise CommandError(f"{exc} (--no-check skips the check)") from None

    def _run(self, pk: int, user=None) -> ElicitationRun:
        """Run ``pk`` (one of ``user``'s studies' with ``--as``), or CommandError."""
        run = scoped(ElicitationRun.objects.select_related("study", "endpoint"), user).filter(pk=pk).first()
        if run is None:
            raise CommandError(f"no run {pk}")
        return run

    def _create(self, o) -> ElicitationRun | None:
        if not o["study"]:
            raise CommandError("give a study slug (or --resume/--cancel/--status RUN)")
        study = get_study(o["study"], acting_user(o))
        if not o["endpoint"]:
            raise CommandError("--endpoint is required (register one with .venv/bin/python manage.py add_endpoint)")
        endpoint = lookup(scoped(ModelEndpoint.objects.all(), acting_user(o)), "name", o["endpoint"], "endpoint")
        if not o["estimate_only"] and (problem := missing_key(endpoint)):
            raise CommandError(problem)  # before a run is created: it could not get a single answer
        if o["mode"] == ElicitationRun.Mode.LIKELIHOOD and not o["estimate_only"]:
            try:  # likewise: an endpoint without prompt log-probabilities could not score a single item
                check_endpoint(endpoint)
            except LikelihoodUnavailable as exc:
                raise CommandError(str(exc)) from None
        items = []
        if o["items"]:
            keys = [k.strip() for k in o["items"].split(",") if k.strip()]
            found = {i.key: i for i in study.main_items().filter(key__in=keys)}
            missing = [k for k in keys if k not in found]
            if missing:
                raise CommandError(f"not main items of {study.slug}: {', '.join(missing[:10])}")
            items = [found[k] for k in keys]
        budget = None
        if o["budget"]:
            try:
                budget = Decimal(o["budget"])
            except InvalidOperation:
                raise CommandError(f"--budget {o['budget']!r} is not an amount in USD") from None
        temperature = o["temperature"]
        if temperature is None:
            temperature = default_temperature(study, o["mode"], o["prompt_style"])
        settings = dict(mode=o["mode"], items=items, samples=o["samples"], temperature=temperature, seed=o["seed"],
                        few_shot=not o["zero_shot"], max_tokens=o["max_tokens"], top_logprobs=o["top_logprobs"],
                        budget_usd=budget, name=o["name"], prompt_version=o["prompt_version"],
                        prompt_style=o["prompt_style"], condition=o["condition"])
        draft = ElicitationRun(study=study, endpoint=endpoint, mode=o["mode"], samples_per_item=o["samples"],
                               temperature=temperature, few_shot=not o["zero_shot"], max_tokens=o["max_tokens"],
                               top_logprobs=o["top_logprobs"], prompt_style=o["prompt_style"])
        self._validate(draft)
        if o["estimate_only"]:
            self._print_estimate(draft, items=items)
            return None
        self._check(endpoint, o)  # a run on an endpoint that fails its pre-flight check is not created
        try:
            run = create_run(study, endpoint, **settings)
        except ValidationError as exc:
            raise CommandError(self._errors(exc)) from None
        self.stdout.write(f"created run {run.pk}: {run.mode} on {study.slug} with {endpoint.name} ({endpoint.model})")
        self._print_estimate(run)
        return run

    def _validate(self, run: ElicitationRun) -> None:
        try:
            run.clean()
        except ValidationError as exc:
            raise CommandError(self._errors(exc)) from None

    @staticmethod
    def _errors(exc: ValidationError) -> str:
        if hasattr(exc, "message_dict"):
            return "run not created: " + "; ".join(f"{f}: {' '.join(m)}" for f, m in exc.message_dict.items())
        return "run not created: " + " ".join(exc.messages)

    def _print_estimate(self, run: ElicitationRun, left_only: bool = False, items=None) -> None:
        if items is not None:  # a run not saved yet
            items = items or list(run.study.main_items())
        est = estimate_run(run, answers_left_only=left_only, items=items)
        self.stdout.write(self._estimate_text(est, "still to do" if left_only else "in all"))

    @staticmethod
    def _estimate_text(est, scope: str = "in all") -> str:
        return (f"estimate ({scope}): {est.answers} answers, {est.requests} requests, ≈{est.prompt_tokens:,} "
                f"prompt tokens + ≤{est.completion_tokens:,} completion tokens, ≈ ${est.cost_usd} [{est.method}]")

    def _cancel(self, run: ElicitationRun) -> None:
        if cancel_run(run, reason="cancelled from the command line"):
            self.stdout.write(self.style.WARNING(f"cancelled run {run.pk}; answers so far are kept "
                                                 f"(resume with --resume {run.pk})"))
        else:
            raise CommandError(f"run {run.pk} is {run.status}, not running")

    def _print_progress(self, run: ElicitationRun) -> None:
        p = progress(run)
        self.stdout.write(
            f"run {run.pk} [{p['status_display']}] {p['done']}/{p['total']} done, {p['failed']} failed, "
            f"{p['pending']} pending ({p['in_flight']} requests in flight, {p['working']} held by workers); tokens {p['prompt_tokens']:,} + "
            f"{p['completion_tokens']:,}; cost ${p['cost_usd']}; {p['answers_per_second'] or 0} answers/s")
        if p["status_reason"]:
            self.stdout.write(f"  {p['status_reason']}")
        if p["unparseable"]:  # kept and counted as done, but no number, option or interval could be read from them
            self.stdout.write(self.style.WARNING(
                f"  {p['unparseable']} of the {p['done']} answers could not be read as an answer (kept as "
                f"unparseable; their raw output: admin › Model responses, status “Unparseable answer (kept)”)"))
        for failure in p["failures"][:10]:
            self.stdout.write(f"  failed: {failure['item']} #{failure['sample_index']}: {failure['error']} "
                              f"({failure['attempts']} attempts)")

    def _bar(self, run: ElicitationRun) -> tqdm:
        p = progress(run)
        return tqdm(total=p["total"], initial=p["done"] + p["failed"], unit="answer", desc=f"run {run.pk}",
                    file=self.stderr._out, dynamic_ncols=True)

    def _update(self, bar: tqdm, run: ElicitationRun) -> dict:
        p = progress(run, failures=0)
        bar.n = p["done"] + p["failed"]
        bar.set_postfix(failed=p["failed"], cost=f"${p['cost_usd']}", rate=p["answers_per_second"], refresh=False)
        bar.refresh()
        return p

    def _sync(self, run: ElicitationRun) -> None:
        bar = self._bar(run)
        shown = {"at": time.monotonic()}

        def on_item() -> None:  # the figures are counts over the whole run: at most once a second, not per item
            if time.monotonic() - shown["at"] >= 1.0:
                self._update(bar, run)
                shown["at"] = time.monotonic()

        try:
            run = run_sync(run, on_item=on_item)
        except KeyboardInterrupt:
            bar.close()
            raise CommandError(f"interrupted; answers so far are kept. Continue with --resume {run.pk}") from None
        self._update(bar, run)
        bar.close()
        self._finish(run)

    def _wait(self, run: ElicitationRun, poll: float = 1.0) -> None:
        bar = self._bar(run)
        try:
            while True:
                run.refresh_from_db()
                self._update(bar, run)
                if run.status != Status.RUNNING:
                    break
                time.sleep(poll)
        except KeyboardInterrupt:
            bar.close()
            self.stdout.write(f"stopped watching; run {run.pk} goes on in the workers (cancel with --cancel {run.pk})")
            return
        bar.close()
        self._finish(run)

    def _finish(self, run: ElicitationRun) -> None:
        self._print_progress(run)
        if run.status == Status.FAILED:
            raise CommandError(f"run {run.pk} finished with failures; --resume {run.pk} retries them")


def _under(outcome: AgentOutcome) -> str:
    """" under CELL" for an agent's run in a study with factors (one run per cell), else ""."""
    return f" under {outcome.cell}" if outcome.cell else ""
