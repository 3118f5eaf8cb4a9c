"""The production web server for real-process tests and bench/participants.py: gunicorn (as ``make run`` and the
Procfile start it) on a free port of 127.0.0.1, with the given environment."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from private_services import ROOT, free_port, wait_for_port


class Gunicorn:
    """``gunicorn config.wsgi``: ``workers`` processes × ``threads`` threads; the log in the var directory."""

    def __init__(self, env: dict[str, str], workers: int = 2, threads: int = 4, app: str = "config.wsgi") -> None:
        self.env, self.port, self.workers, self.threads, self.app = env, free_port(), workers, threads, app
        self.log = Path(env["HEDGELAB_VAR_DIR"]) / "gunicorn.log"
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "Gunicorn":
        gunicorn = Path(sys.executable).with_name("gunicorn")
        self.proc = subprocess.Popen(
            [str(gunicorn), self.app, "--bind", f"127.0.0.1:{self.port}", "--workers", str(self.workers),
             "--threads", str(self.threads), "--timeout", "120", "--graceful-timeout", "5"],
            cwd=ROOT, env=self.env, stdout=self.log.open("w"), stderr=subprocess.STDOUT)
        wait_for_port(self.port)
        return self

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"
