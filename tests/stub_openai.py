"""A scriptable OpenAI-compatible HTTP server on loopback, for tests and benchmarks.

Real HTTP (``http.server.ThreadingHTTPServer`` in a thread), so the real ``openai`` client is used
end to end. A test scripts what the server answers and then inspects what it was sent::

    with StubOpenAI() as stub:
        stub.queue(Reply.error(429, headers={"Retry-After": "1"}), Reply.answer("70"))
        stub.default = Reply.answer("50")          # after the queue is used up
        stub.responder = lambda req: ...           # or decide per request (returns a Reply or None)
        ... stub.base_url ...                      # "http://127.0.0.1:<port>/v1"
        stub.requests                              # [RecordedRequest(path, body, headers, received_at, ...)]

Supported routes: POST /v1/chat/completions, POST /v1/completions (both also with ``stream: true``,
answered as server-sent events), GET /v1/models.

As a program, it serves one answer to every request until Ctrl-C, to try runs without a model or a key
(docs/howto/endpoints.md)::

    .venv/bin/python tests/stub_openai.py --port 8199 --answer 70

Prompt log-probabilities (completions with ``echo: true`` and ``logprobs``, as the likelihood mode asks): a
reply made with ``Reply.scoring(fn)`` echoes the prompt, split into tokens at spaces (" word"), each with the
log-probability ``fn(token)`` (the first token null, as OpenAI and llama.cpp give it), then one generated
token. Any other reply ignores ``echo``, like an endpoint that cannot score prompts.
"""
from __future__ import annotations

import json
import math
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, MutableMapping

if __name__ == "__main__":  # run as a script (`.venv/bin/python tests/stub_openai.py`): the project's packages
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from elicitation.local_model import LOOPBACK_NETWORKS

TopList = list[tuple[str, float]]  # (token, logprob) alternatives at one position
TokenSpec = tuple[str, float, TopList]  # (chosen token, its logprob, alternatives)


@dataclass
class Reply:
    """What the stub sends back for one request."""

    status: int = 200
    text: str | None = None  # model answer (status 200)
    tokens: list[TokenSpec] | None = None  # logprobs per generated position
    body: bytes | None = None  # raw body (overrides text), e.g. garbage
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering
    trickle: float = 0.0  # > 0: send the headers, then the body one byte every `trickle` seconds (a hung endpoint)
    fingerprint: str | None = "fp_stub_1"
    prompt_tokens: int = 100
    completion_tokens: int = 2
    finish_reason: str = "stop"
    echo_logprob: Callable[[str], float] | None = None  # answers echo + logprobs (see the module doc)

    @classmethod
    def scoring(cls, logprob: Callable[[str], float], **kw: Any) -> "Reply":
        """A completion that, asked with ``echo`` and ``logprobs``, scores the prompt's tokens with ``logprob``."""
        return cls(text=" The", echo_logprob=logprob, finish_reason="length", completion_tokens=1, **kw)

    @classmethod
    def answer(cls, text: str, *, tokens: list[TokenSpec] | None = None, delay: float = 0.0, **kw: Any) -> "Reply":
        return cls(text=text, tokens=tokens, delay=delay, **kw)

    @classmethod
    def error(cls, status: int, message: str = "stub error", *, headers: dict[str, str] | None = None,
              delay: float = 0.0) -> "Reply":
        body = json.dumps({"error": {"message": message, "type": "stub_error", "code": str(status)}}).encode()
        return cls(status=status, body=body, headers=headers or {}, delay=delay)

    @classmethod
    def trickling(cls, text: str = "50", every: float = 2.0, **kw: Any) -> "Reply":
        """A valid answer whose body comes one byte every ``every`` seconds, after the headers."""
        return cls(text=text, trickle=every, **kw)

    @classmethod
    def garbage(cls, body: bytes = b"<html>502 Bad Gateway</html>", content_type: str = "text/html") -> "Reply":
        return cls(status=200, body=body, content_type=content_type)


@dataclass
class RecordedRequest:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    received_at: float  # time.monotonic() when the request arrived
    received_wall: float  # time.time()
    finished_at: float | None = None  # time.monotonic() when the reply was sent (None: never)
    abandoned_at: float | None = None  # time.monotonic() when the client was found to have hung up mid-reply
    raw: bytes = b""  # the body exactly as it arrived (tests/test_elicitation_request_bodies.py)

    @property
    def prompt_text(self) -> str:
        """The prompt as one string (completions) or the chat messages joined (chat)."""
        if "prompt" in self.body:
            return str(self.body["prompt"])
        return "\n".join(m.get("content", "") for m in self.body.get("messages", []))


def _logprobs_chat(tokens: list[TokenSpec]) -> dict[str, Any]:
    return {"content": [
        {"token": tok, "logprob": lp, "bytes": list(tok.encode()),
         "top_logprobs": [{"token": t, "logprob": l, "bytes": list(t.encode())} for t, l in top]}
        for tok, lp, top in tokens
    ], "refusal": None}


def _logprobs_completions(tokens: list[TokenSpec]) -> dict[str, Any]:
    offsets, pos = [], 0
    for tok, _, _ in tokens:
        offsets.append(pos)
        pos += len(tok)
    return {"tokens": [t for t, _, _ in tokens], "token_logprobs": [lp for _, lp, _ in tokens],
            "top_logprobs": [dict(top) for _, _, top in tokens], "text_offset": offsets}


def prompt_tokens(prompt: str) -> list[str]:
    """The stub's tokenizer: each word with the spaces before it ("The cat" → ["The", " cat"])."""
    return re.findall(r"\s*\S+", prompt) or [prompt]


def _echo_logprobs(prompt: str, reply: Reply) -> dict[str, Any]:
    """Logprobs of every prompt token (the first null) and of one generated token, with text offsets."""
    tokens = prompt_tokens(prompt) + [reply.text or " "]
    offsets, pos = [], 0
    for tok in tokens:
        offsets.append(pos)
        pos += len(tok)
    values: list[float | None] = [reply.echo_logprob(t) for t in tokens]  # type: ignore[misc]
    values[0] = None
    return {"tokens": tokens, "token_logprobs": values, "top_logprobs": [None] + [{t: v} for t, v in
                                                                                 zip(tokens[1:], values[1:])],
            "text_offset": offsets}


def build_body(path: str, request: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """An OpenAI-shaped completion body for ``reply`` (chat or text completions by ``path``)."""
    created = int(time.time())
    usage = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
             "total_tokens": reply.prompt_tokens + reply.completion_tokens}
    text = reply.text or ""
    if path.endswith("/chat/completions"):
        choice: dict[str, Any] = {"index": 0, "finish_reason": reply.finish_reason,
                                  "message": {"role": "assistant", "content": text}}
        choice["logprobs"] = _logprobs_chat(reply.tokens) if reply.tokens is not None else None
        obj = "chat.completion"
    else:
        choice = {"index": 0, "finish_reason": reply.finish_reason, "text": text}
        choice["logprobs"] = _logprobs_completions(reply.tokens) if reply.tokens is not None else None
        obj = "text_completion"
        if reply.echo_logprob is not None and request.get("echo") and request.get("logprobs") is not None:
            prompt = str(request.get("prompt", ""))
            choice["text"] = prompt + text
            choice["logprobs"] = _echo_logprobs(prompt, reply)
            usage.update(prompt_tokens=len(prompt_tokens(prompt)), completion_tokens=1,
                         total_tokens=len(prompt_tokens(prompt)) + 1)
    body = {"id": f"stub-{created}", "object": obj, "created": created,
            "model": request.get("model", "stub-model"), "choices": [choice], "usage": usage}
    if reply.fingerprint is not None:
        body["system_fingerprint"] = reply.fingerprint
    return body


def build_stream(path: str, request: dict[str, Any], reply: Reply) -> bytes:
    """The same reply as server-sent events (``stream: true``): one chunk per token, a final chunk with
    the finish reason, a usage chunk when ``stream_options.include_usage`` is set, then ``[DONE]``."""
    whole = build_body(path, request, reply)
    chat = path.endswith("/chat/completions")
    tokens = reply.tokens if reply.tokens is not None else ([(reply.text, 0.0, [])] if reply.text else [])
    head = {k: whole[k] for k in ("id", "created", "model")}
    head["object"] = "chat.completion.chunk" if chat else "text_completion"
    if "system_fingerprint" in whole:
        head["system_fingerprint"] = whole["system_fingerprint"]
    events = []
    for token in tokens:
        if chat:
            choice = {"index": 0, "delta": {"role": "assistant", "content": token[0]}, "finish_reason": None,
                      "logprobs": _logprobs_chat([token]) if reply.tokens is not None else None}
        else:
            choice = {"index": 0, "text": token[0], "finish_reason": None,
                      "logprobs": _logprobs_completions([token]) if reply.tokens is not None else None}
        events.append({**head, "choices": [choice]})
    last = {"index": 0, "finish_reason": reply.finish_reason, "logprobs": None}
    last.update({"delta": {}} if chat else {"text": ""})
    events.append({**head, "choices": [last]})
    if (request.get("stream_options") or {}).get("include_usage"):
        events.append({**head, "choices": [], "usage": whole["usage"]})
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode() + b"data: [DONE]\n\n"


def tokens_for(answer: str, top: TopList) -> list[TokenSpec]:
    """Logprobs for a one-token answer: the chosen token and its alternatives (logprob from ``top``)."""
    chosen = dict(top).get(answer, math.log(0.5))
    return [(answer, chosen, top)]


LOOPBACK_SETTINGS = {
    # the stub (and the bundled local model) listen on loopback, which endpoints may reach only when the operator
    # allows it (elicitation.destinations); a key variable of the tests may be sent to any port of 127.0.0.1
    "MODEL_ENDPOINT_ALLOWED_NETWORKS": LOOPBACK_NETWORKS,
    "MODEL_API_KEY_VARS": "*_API_KEY@127.0.0.1:*",
}


def allow_loopback(environ: MutableMapping[str, str]) -> MutableMapping[str, str]:
    """``environ`` with the settings that let endpoints reach the stub (those set already are kept)."""
    for name, value in LOOPBACK_SETTINGS.items():
        environ.setdefault(name, value)
    return environ


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # many clients connecting at once (benchmarks) are queued, not refused


class StubOpenAI:
    """The server. Use as a context manager or call ``start()``/``stop()``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.default: Reply = Reply.answer("50")
        self.responder: Callable[[RecordedRequest], Reply | None] | None = None
        self.requests: list[RecordedRequest] = []
        self.max_in_flight = 0
        self._in_flight = 0  # requests whose handler has not finished (answering, waiting or trickling)
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = _Server((host, port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # --- scripting -----------------------------------------------------------------
    def queue(self, *replies: Reply) -> None:
        """Replies sent in order to the next requests (before ``responder`` and ``default``)."""
        with self._lock:
            self._queue.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.max_in_flight = 0
        self.responder = None
        self.default = Reply.answer("50")

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            reply = self.responder(request)
            if reply is not None:
                return reply
        return self.default

    @property
    def in_flight(self) -> int:
        """Requests being answered right now (a trickled one until its client hangs up or it is all sent)."""
        with self._lock:
            return self._in_flight

    # --- lifecycle -----------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "StubOpenAI":
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="stub-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "StubOpenAI":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- HTTP ----------------------------------------------------------------------
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # the headers and the body leave in separate writes: without TCP_NODELAY the body waits for the
            # client's delayed ACK (~40 ms a reply on Linux), and the "instant" stub answers 20 times a second
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str],
                      trickle: float = 0.0) -> bool:
                """Send the reply; False if the client hung up first."""
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    if not trickle:
                        self.wfile.write(body)
                        return True
                    self.wfile.flush()
                    for i in range(len(body)):
                        time.sleep(trickle)
                        self.wfile.write(body[i:i + 1])
                        self.wfile.flush()
                    return True
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout, cancel)
                    self.close_connection = True
                    return False

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    body = {"object": "list", "data": [{"id": "stub-model", "object": "model", "owned_by": "stub"}]}
                    self._send(200, json.dumps(body).encode(), "application/json", {})
                else:
                    self._send(404, b'{"error": {"message": "not found"}}', "application/json", {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                record = RecordedRequest(path=self.path, body=body, headers=dict(self.headers.items()),
                                         received_at=time.monotonic(), received_wall=time.time(), raw=raw)
                with stub._lock:
                    stub.requests.append(record)
                    stub._in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub._in_flight)
                try:
                    reply = stub._next_reply(record)
                    if reply.delay:
                        time.sleep(reply.delay)
                    if reply.body is not None:
                        payload = reply.body
                    elif not (self.path.endswith("/completions")):
                        payload = b'{"error": {"message": "unknown route"}}'
                        reply = Reply(status=404, body=payload)
                    elif body.get("stream") and reply.status == 200:
                        payload = build_stream(self.path, body, reply)
                        reply = Reply(status=200, headers=reply.headers, content_type="text/event-stream")
                    else:
                        payload = json.dumps(build_body(self.path, body, reply)).encode()
                    if self._send(reply.status, payload, reply.content_type, reply.headers, reply.trickle):
                        record.finished_at = time.monotonic()
                    else:
                        record.abandoned_at = time.monotonic()
                finally:
                    with stub._lock:
                        stub._in_flight -= 1

        return Handler


try:  # pytest fixtures for the elicitation tests (the module also serves bench/, without pytest)
    import pytest
except ImportError:  # pragma: no cover
    pytest = None

if pytest is not None:

    @pytest.fixture
    def stub():
        """A running stub server, stopped after the test."""
        with StubOpenAI() as server:
            yield server


def make_endpoint(server: StubOpenAI, name: str = "stub", **fields: Any):
    """A ModelEndpoint row pointing at ``server`` with fast retries (needs the Django test database)."""
    from elicitation.models import ModelEndpoint

    values = dict(base_url=server.base_url, model="stub-model", api_style="chat", max_retries=3,
                  retry_backoff_seconds=0.01, retry_backoff_max_seconds=0.05, timeout_seconds=5.0,
                  max_concurrency=4)
    values.update(fields)
    return ModelEndpoint.objects.create(name=name, **values)


def main(argv: list[str] | None = None) -> None:
    """Serve the stub on loopback with the same answer to every request, until Ctrl-C."""
    import argparse

    parser = argparse.ArgumentParser(description="An OpenAI-compatible endpoint on 127.0.0.1 that gives the same "
                                                 "answer to every request (no model, no key).")
    parser.add_argument("--port", type=int, default=0, help="default: any free port (printed)")
    parser.add_argument("--answer", default="70", help="the text of every answer (default: 70)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait before each answer (default: 0)")
    args = parser.parse_args(argv)
    with StubOpenAI(port=args.port) as server:
        server.default = Reply.answer(args.answer, delay=args.delay)
        print(f"stub endpoint at {server.base_url} (model: any name), answering {args.answer!r} to every request; "
              "Ctrl-C stops it", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
