"""The ceiling for bench/participants.py: the platform's own settings and URLs plus one bare Django view on the
same server and database — it reads the session, INSERTs one row and renders a small page, which is the least
an answer can cost. Used only as the bench server's DJANGO_SETTINGS_MODULE (and ROOT_URLCONF)."""
from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.template import engines
from django.utils import timezone
from django.views.decorators.cache import never_cache

from config.settings import *  # noqa: F401,F403  (the platform's settings, unchanged)

ROOT_URLCONF = "bench.bare_urls"
TABLE = "bench_bare_answer"


def create_table_sql(vendor: str) -> str:
    key = "bigserial PRIMARY KEY" if vendor == "postgresql" else "integer PRIMARY KEY AUTOINCREMENT"
    return (f"CREATE TABLE IF NOT EXISTS {TABLE} (id {key}, session_key varchar(40) NOT NULL, "
            "n integer NOT NULL, created_at timestamp NOT NULL)")


_template = None


@never_cache
def bare(request: HttpRequest) -> HttpResponse:
    """Session (written only on the first visit), one INSERT, a small rendered page."""
    global _template
    if _template is None:
        _template = engines["django"].from_string(
            "<!doctype html><html><head><title>Question {{ n }}</title></head><body><form method=post>"
            "<p>Question {{ n }}</p><input name=value><button>Next</button></form></body></html>")
    if "n" not in request.session:
        request.session["n"] = 1
    n = request.session["n"]
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {TABLE} (session_key, n, created_at) VALUES (%s, %s, %s)",
                       [request.session.session_key or "", n, timezone.now()])
    return HttpResponse(_template.render({"n": n}, request))

