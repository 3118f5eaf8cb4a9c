"""The admin login lockout (django-axes, config.login_lockout): after LOGIN_MAX_FAILURES failures from one
client address (the last failure already answered), further attempts from it get HTTP 429 without checking the password, until the window ends or
``manage.py axes_reset``. It never locks a username for everyone: a stranger's failures lock the stranger."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db
LOGIN = "/admin/login/"
PASSWORD = "right-horse-battery-staple"


@pytest.fixture(autouse=True)
def low_limit(settings):
    settings.AXES_FAILURE_LIMIT = 3


@pytest.fixture
def boss():
    return User.objects.create_superuser("boss", "b@example.org", PASSWORD)


def attempt(client: Client, username: str, password: str, ip: str = "10.0.0.1", **headers: str):
    return client.post(LOGIN, {"username": username, "password": password, "next": "/admin/"}, REMOTE_ADDR=ip,
                       **headers)


def test_guessing_is_stopped_even_with_the_right_password(client, boss):
    assert [attempt(client, "boss", "wrong").status_code for _ in range(3)] == [200, 200, 429]
    locked = attempt(client, "boss", PASSWORD)
    assert locked.status_code == 429 and "Too many failed logins" in locked.content.decode()
    assert int(locked["Retry-After"]) > 0
    assert "_auth_user_id" not in client.session


def test_a_stranger_cannot_lock_someone_else_out(client, boss):
    for _ in range(5):
        attempt(client, "boss", "wrong", ip="203.0.113.66")
    assert attempt(client, "boss", PASSWORD, ip="203.0.113.66").status_code == 429  # the stranger is locked
    assert attempt(Client(), "boss", PASSWORD, ip="10.0.2.9").status_code == 302  # the owner is not


def test_one_address_cannot_spray_usernames(client, boss):
    for name in ("a", "b", "c"):
        attempt(client, name, "wrong")
    assert attempt(client, "boss", PASSWORD).status_code == 429
    assert attempt(Client(), "boss", PASSWORD, ip="10.9.9.9").status_code == 302


def test_a_forged_forwarded_for_does_not_escape_the_lockout(client, boss, settings):
    """Behind one proxy the client is the hop the proxy appended (the last); the hops before it are the
    client's own words. Changing them on every attempt must not reset the count."""
    settings.TRUSTED_PROXY_COUNT = 1
    statuses = [attempt(client, "boss", "wrong" if n < 7 else PASSWORD, ip="127.0.0.1",
                        HTTP_X_FORWARDED_FOR=f"192.0.2.{n}, 198.51.100.7").status_code for n in range(8)]
    assert statuses == [200] * 2 + [429] * 6
    # another client behind the same proxy is not affected
    assert attempt(Client(), "boss", PASSWORD, ip="127.0.0.1",
                   HTTP_X_FORWARDED_FOR="198.51.100.8").status_code == 302


def test_logging_in_to_ones_own_account_does_not_reset_the_count(client, boss):
    """Someone with an account cannot log in between guesses at another's password to start again."""
    User.objects.create_user("mallory", password="mallory-own-password-1", is_staff=True)
    attempt(client, "boss", "wrong")
    attempt(client, "boss", "wrong")
    assert attempt(client, "mallory", "mallory-own-password-1").status_code == 302
    assert attempt(Client(), "boss", "wrong").status_code == 429


def test_axes_reset_ends_a_lockout(boss):
    locked = Client()
    for _ in range(3):
        attempt(locked, "boss", "wrong", ip="10.0.0.2")
    assert attempt(locked, "boss", PASSWORD, ip="10.0.0.2").status_code == 429
    call_command("axes_reset")
    assert attempt(locked, "boss", PASSWORD, ip="10.0.0.2").status_code == 302


def test_attempts_are_listed_in_the_admin(admin_client, boss):
    attempt(Client(), "boss", "wrong", ip="203.0.113.5")
    page = admin_client.get("/admin/axes/accessattempt/").content.decode()
    assert "203.0.113.5" in page
