"""The admin login is throttled (config.throttle): after LOGIN_MAX_FAILURES failures from one address or
for one username, further attempts get HTTP 429 without checking the password, until the window ends."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

pytestmark = pytest.mark.django_db
LOGIN = "/admin/login/"


@pytest.fixture(autouse=True)
def fresh_cache(settings):
    settings.LOGIN_MAX_FAILURES = 3
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def boss():
    return User.objects.create_superuser("boss", "b@example.org", "right-horse-battery-staple")


def attempt(client: Client, username: str, password: str, ip: str = "10.0.0.1"):
    return client.post(LOGIN, {"username": username, "password": password, "next": "/admin/"}, REMOTE_ADDR=ip)


def test_guessing_is_stopped_even_with_the_right_password(client, boss):
    for _ in range(3):
        assert attempt(client, "boss", "wrong").status_code == 200  # the form again, with an error
    locked = attempt(client, "boss", "right-horse-battery-staple")
    assert locked.status_code == 429 and "Too many failed logins" in locked.content.decode()
    assert int(locked["Retry-After"]) > 0
    assert "_auth_user_id" not in client.session


def test_the_username_is_locked_from_other_addresses_too(client, boss):
    for n in range(3):
        attempt(client, "boss", "wrong", ip=f"10.0.1.{n}")
    assert attempt(Client(), "boss", "right-horse-battery-staple", ip="10.0.2.9").status_code == 429


def test_one_address_cannot_spray_usernames(client, boss):
    for name in ("a", "b", "c"):
        attempt(client, name, "wrong")
    assert attempt(client, "boss", "right-horse-battery-staple").status_code == 429
    assert attempt(Client(), "boss", "right-horse-battery-staple", ip="10.9.9.9").status_code == 302


def test_a_success_clears_the_username_and_the_window_ends(client, boss):
    attempt(client, "boss", "wrong")
    attempt(client, "boss", "wrong")
    assert attempt(client, "boss", "right-horse-battery-staple").status_code == 302
    cache.clear()  # the window has passed
    assert attempt(Client(), "boss", "right-horse-battery-staple").status_code == 302
