"""An answer given before the request body was read (401, 415, …) still reads the body to its end, so that a
client uploading a file gets the answer instead of "connection reset" (issue 24.11: a 990 KB multipart).
Checked by hand against gunicorn (sync and gthread workers) with a client sending at network pace: without
config/request_body.py the client's send failed with a broken pipe; with it, every answer arrived."""
from __future__ import annotations

import io

import pytest

from config.request_body import DrainRequestBody

pytestmark = pytest.mark.django_db
BOUNDARY = "XyZ"


def multipart(size: int) -> bytes:
    return (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n"
            f"Content-Type: text/csv\r\n\r\n").encode() + b"x" * size + f"\r\n--{BOUNDARY}--\r\n".encode()


def call(app, path: str, body: bytes, **headers: str) -> tuple[str, io.BytesIO]:
    stream = io.BytesIO(body)
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": path, "SERVER_NAME": "testserver", "SERVER_PORT": "80",
               "wsgi.url_scheme": "http", "wsgi.input": stream, "wsgi.errors": io.StringIO(),
               "CONTENT_TYPE": f"multipart/form-data; boundary={BOUNDARY}", "CONTENT_LENGTH": str(len(body)),
               **headers}
    answered: list[str] = []
    result = app(environ, lambda status, headers, exc_info=None: answered.append(status))
    b"".join(result)
    getattr(result, "close", lambda: None)()
    return answered[0], stream


def test_an_early_answer_still_reads_the_whole_body(settings):
    from config.wsgi import application

    settings.SECURE_SSL_REDIRECT = False
    body = multipart(990 * 1024)
    for path, headers, expected in [("/api/studies/nope/import-items/", {}, "401"),  # no token: answered at once
                                    ("/api/nothing-here/", {}, "404")]:
        status, stream = call(application, path, body, **headers)
        assert status.startswith(expected) and stream.tell() == len(body), (path, status, stream.tell())


def test_the_rest_read_is_bounded(settings):
    from django.core.wsgi import get_wsgi_application

    settings.SECURE_SSL_REDIRECT = False
    app = DrainRequestBody(get_wsgi_application(), limit=1024)
    body = multipart(64 * 1024)
    status, stream = call(app, "/api/studies/nope/import-items/", body)
    assert status.startswith("401") and stream.tell() < len(body)  # too much left: not read, as before
