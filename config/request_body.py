"""Read the whole request body before answering, even when the answer came without it (WSGI wrapper).

An answer given before the body is read (401 without a token, 403, 415 for a form sent to a JSON route, a
redirect) makes the server close the connection while the client is still sending: a client uploading a
large file (the reviewer's 990 KB multipart) then sees "connection reset" / "broken pipe" instead of the
answer. Werkzeug's servers drain the body for the same reason. :class:`DrainRequestBody` reads what the
application left of the body, up to :data:`MAX_DRAIN` bytes (more than that: the connection is closed as
before, so a client cannot hold a worker with an endless upload).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

#: Largest unread rest of a body that is read and dropped (the imports' files are far smaller).
MAX_DRAIN = 64 * 1024 * 1024
CHUNK = 64 * 1024


class _CountingInput:
    """``wsgi.input`` that counts the bytes the application read."""

    def __init__(self, stream: Any):
        self.stream, self.consumed = stream, 0

    def read(self, *args: Any) -> bytes:
        data = self.stream.read(*args)
        self.consumed += len(data)
        return data

    def readline(self, *args: Any) -> bytes:
        line = self.stream.readline(*args)
        self.consumed += len(line)
        return line

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _content_length(environ: dict) -> int:
    """The request's Content-Length (a WSGI environ key, not an environment variable); 0 if none."""
    try:
        return max(0, int(environ["CONTENT_LENGTH"] or 0)) if "CONTENT_LENGTH" in environ else 0
    except ValueError:
        return 0


class DrainRequestBody:
    """WSGI middleware: after the application answered, read and drop the rest of the request body."""

    def __init__(self, app: Callable, limit: int = MAX_DRAIN):
        self.app, self.limit = app, limit

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        length = _content_length(environ)
        if not length or "wsgi.input" not in environ:
            return self.app(environ, start_response)
        counted = environ["wsgi.input"] = _CountingInput(environ["wsgi.input"])
        result = self.app(environ, start_response)
        left = length - counted.consumed
        if 0 < left <= self.limit:
            try:
                while left > 0 and (data := counted.stream.read(min(CHUNK, left))):
                    left -= len(data)
            except OSError:  # the client went away: nothing to answer
                pass
        return result
