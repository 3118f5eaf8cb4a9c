"""python manage.py refine RUN [--endpoint NAME] [--shown 3] [--setting single|mixed] [--draw-seed N] [--sync | --wait]

Self-refinement: a new run whose prompts show answers of run RUN (elicitation/refinement.py).
Progress, cancelling and resuming are those of any run (``elicit --status/--cancel/--resume``)."""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from access.cli import add_as_argument, acting_user, scoped
from elicitation.management.commands.elicit import Command as ElicitCommand
from elicitation.models import ElicitationRun, ModelEndpoint
from elicitation.refinement import create_refinement
from elicitation.run_settings import REFINE_SETTINGS
from elicitation.runs import missing_key
from surveys.cli import lookup


class Command(ElicitCommand):
    help = ("Self-refinement of a run: each prompt shows e of its answers to the same question and asks for a new, "
            "better answer, as the study's item kind words and reads its refinement (interval answers: the answers "
            "with their confidence levels, the most likely one and a new, better interval).")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("source", type=int, help="id of the run whose answers are shown")
        parser.add_argument("--endpoint", help="endpoint that refines (default: the source run's)")
        parser.add_argument("--shown", type=int, default=3,
                            help="answers shown per prompt (e, the candidates; default 3, as the paper says: the "
                                 "authors' stored Table 7 equals their n = 4 curve, see the metrics reference)")
        parser.add_argument("--setting", default="single", choices=REFINE_SETTINGS,
                            help="single: answers at the item's own level; mixed: answers at every level")
        parser.add_argument("--draw-seed", type=int, default=0, help="seed of the draws of shown answers")
        parser.add_argument("--mode", default="greedy", choices=[ElicitationRun.Mode.GREEDY, ElicitationRun.Mode.SAMPLED])
        parser.add_argument("--samples", type=int, default=1, help="refinements per item, each with its own draw")
        parser.add_argument("--temperature", type=float, help="sampling temperature (sampled mode; default 1.0)")
        parser.add_argument("--seed", type=int, help="seed sent where the endpoint takes one (+ sample index)")
        parser.add_argument("--max-tokens", type=int, default=256)
        parser.add_argument("--name", default="")
        parser.add_argument("--wait", action="store_true", help="show a progress bar until the run ends")
        parser.add_argument("--sync", action="store_true", help="answer in this process, without a worker")
        parser.add_argument("--no-check", action="store_true",
                            help="skip the endpoint's pre-flight check (one cheap request before the run is created)")

    def handle(self, *args, **o):
        source = self._run(o["source"], acting_user(o))
        endpoints = scoped(ModelEndpoint.objects.all(), acting_user(o))
        endpoint = lookup(endpoints, "name", o["endpoint"], "endpoint") if o["endpoint"] else source.endpoint
        if problem := missing_key(endpoint):
            raise CommandError(problem)
        self._check(endpoint, o)  # a run on an endpoint that fails its pre-flight check is not created
        temperature = o["temperature"]
        if temperature is None:
            temperature = 1.0 if o["mode"] == ElicitationRun.Mode.SAMPLED else 0.0
        try:
            run = create_refinement(source, endpoint, shown=o["shown"], setting=o["setting"], draw_seed=o["draw_seed"],
                                    mode=o["mode"], samples=o["samples"], temperature=temperature, seed=o["seed"],
                                    max_tokens=o["max_tokens"], name=o["name"])
        except ValidationError as exc:
            raise CommandError(self._errors(exc)) from None
        self.stdout.write(f"created run {run.pk}: self-refinement of run {source.pk} ({o['setting']} confidence, "
                          f"{o['shown']} answers shown, draw seed {o['draw_seed']}) with {endpoint.name}")
        self._print_estimate(run)
        return self._start(run, o)
