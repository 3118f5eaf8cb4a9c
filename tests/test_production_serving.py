"""Production mode out of the box (issue 10): gunicorn with DEBUG=0 and no `collectstatic` run serves the
admin's CSS and the participant pages (before: HTTP 500, "Missing staticfiles manifest entry"); after
`collectstatic` the pages link the hashed, compressed copies, which are served too."""
from __future__ import annotations

import re
import tempfile
import urllib.request
from pathlib import Path

from private_services import Participant, django_env, manage
from real_server import Gunicorn

STRONG_KEY = "k3Jx9-t8vQ_2mZ7rW4yN6pL1sD5fH0gA8bC3eU9iO2jR7wT4xV6zQ1nM5kP8sY0aE"


def production_env(var: Path) -> dict[str, str]:
    return django_env(f"sqlite:///{var / 'db.sqlite3'}", var, DEBUG="0", SECRET_KEY=STRONG_KEY,
                      ALLOWED_HOSTS="127.0.0.1", SECURE_SSL_REDIRECT="0", SESSION_COOKIE_SECURE="0",
                      CSRF_COOKIE_SECURE="0", STATIC_ROOT=str(var / "static"))


def fetch(url: str) -> tuple[int, str, str]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read().decode()


def admin_css(base: str) -> tuple[str, int, str]:
    status, _, page = fetch(base + "/admin/login/")
    assert status == 200
    href = re.search(r'href="(/static/admin/css/base[^"]*\.css)"', page).group(1)
    status, content_type, css = fetch(base + href)
    assert status == 200 and content_type.startswith("text/css") and css.strip()
    return href, status, css


def walk(base: str, pid: str) -> Participant:
    person = Participant(base, "demo", pid)
    person.run(answers=2)
    assert set(person.statuses) <= {200, 302}, person.bodies_500[:1]
    assert person.confirmed == [1, 2]
    return person


def test_debug_off_serves_static_files_and_participants_without_collectstatic():
    with tempfile.TemporaryDirectory() as var:
        env = production_env(Path(var))
        manage(env, "migrate", "--noinput")
        manage(env, "load_demo")
        with Gunicorn(env, workers=1, threads=2) as web:
            href, _, _ = admin_css(web.base)
            assert href == "/static/admin/css/base.css"  # the plain name, from the admin app's folder
            walk(web.base, "PROD0001")
        assert not list((Path(var) / "static").glob("**/*.css"))  # really nothing collected


def test_after_collectstatic_the_hashed_copies_are_served():
    with tempfile.TemporaryDirectory() as var:
        env = production_env(Path(var))
        manage(env, "migrate", "--noinput")
        manage(env, "load_demo")
        manage(env, "collectstatic", "--noinput", "-v0")
        with Gunicorn(env, workers=1, threads=2) as web:
            href, _, _ = admin_css(web.base)
            assert re.fullmatch(r"/static/admin/css/base\.[0-9a-f]{12}\.css", href)
            walk(web.base, "PROD0002")
