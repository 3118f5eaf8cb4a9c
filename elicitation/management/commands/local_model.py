"""python manage.py local_model start|stop|status — the bundled Gemma 3 270M server on loopback."""
from __future__ import annotations

import dataclasses

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from elicitation import local_model
from elicitation.destinations import url_problem


class Command(BaseCommand):
    help = ("Start, stop or show the bundled offline model (Gemma 3 270M on llama.cpp's OpenAI-compatible "
            "server, loopback only). `start` returns once the server answers and registers the endpoint "
            f"'{local_model.ENDPOINT_NAME}'; the server keeps running in the background. Pid and log files "
            "are in the var directory.")

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["start", "stop", "status"])
        defaults = local_model.ServerConfig.from_env()
        parser.add_argument("--host", default=defaults.host, help="listen address (default %(default)s)")
        parser.add_argument("--port", type=int, default=defaults.port,
                            help="listen port (default %(default)s; env LOCAL_MODEL_PORT)")
        parser.add_argument("--threads", type=int, default=defaults.threads,
                            help="CPU threads (default: all cores; env LOCAL_MODEL_THREADS)")
        parser.add_argument("--n-ctx", type=int, default=defaults.n_ctx,
                            help="context size in tokens (default %(default)s; env LOCAL_MODEL_N_CTX)")
        parser.add_argument("--timeout", type=float, default=120.0,
                            help="seconds to wait for the server to answer (default %(default)s)")

    def handle(self, *args, action: str, **options):
        var_dir = settings.VAR_DIR
        if action == "start":
            config = local_model.ServerConfig(host=options["host"], port=options["port"],
                                              threads=options["threads"], n_ctx=options["n_ctx"])
            try:
                state = local_model.start(var_dir, config, timeout=options["timeout"])
            except local_model.LocalModelError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(self.style.SUCCESS(
                f"local model running: pid {state.pid}, {state.base_url} (model {state.model_id}), "
                f"endpoint '{local_model.ENDPOINT_NAME}'; log {state.log}"))
            if problem := url_problem(state.base_url):  # runs on it would be refused: say so now
                self.stderr.write(f"note: runs cannot use it yet: {problem} (e.g. MODEL_ENDPOINT_ALLOWED_NETWORKS="
                                  f"{local_model.LOOPBACK_NETWORKS} for the web server and the workers)")
        elif action == "stop":
            pid = local_model.stop(var_dir)
            self.stdout.write(f"local model stopped (pid {pid})" if pid else "local model was not running")
        else:
            state = local_model.status(var_dir)
            if not local_model.is_installed():
                self.stdout.write(f"local model not installed (missing: {', '.join(local_model.missing_packages())})")
            if not state.running:
                raise CommandError(f"local model not running; log {state.log}", returncode=3)
            answering = f"model {state.model_id}" if state.model_id else "NOT answering yet"
            self.stdout.write(f"local model running: pid {state.pid}, {state.base_url}, {answering}; log {state.log}")
            if options["verbosity"] > 1:
                self.stdout.write(str(dataclasses.asdict(state)))
