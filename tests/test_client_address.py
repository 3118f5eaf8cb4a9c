"""The client address (config.client_address): REMOTE_ADDR without proxies; behind TRUSTED_PROXY_COUNT
proxies the X-Forwarded-For hop that many places from the right, never one the client wrote itself."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import RequestFactory

from config.client_address import client_address, proxy_count

ROOT = Path(__file__).resolve().parent.parent


def request(forwarded: str | None = None, remote: str = "10.0.0.1"):
    headers = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    return RequestFactory().get("/", REMOTE_ADDR=remote, **headers)


@pytest.mark.parametrize("proxies, forwarded, expected", [
    (0, "192.0.2.1", "10.0.0.1"),                         # no proxy: the header is the client's own words
    (1, "192.0.2.1", "192.0.2.1"),                        # one proxy appended the client
    (1, "6.6.6.6, 192.0.2.1", "192.0.2.1"),               # a forged first hop is ignored
    (2, "6.6.6.6, 192.0.2.1, 10.1.1.1", "192.0.2.1"),     # two proxies: the second hop from the right
    (2, "192.0.2.1", "10.0.0.1"),                         # fewer hops than proxies: not through them all
    (1, "", "10.0.0.1"),
    (1, "not-an-address", "10.0.0.1"),
    (1, "6.6.6.6, [2001:db8::1]", "2001:db8::1"),
])
def test_the_client_is_the_hop_that_many_proxies_from_the_right(settings, proxies, forwarded, expected):
    settings.TRUSTED_PROXY_COUNT = proxies
    assert client_address(request(forwarded)) == expected


def test_without_a_header_or_a_request(settings):
    settings.TRUSTED_PROXY_COUNT = 1
    assert client_address(request()) == "10.0.0.1"
    assert client_address(None) == ""
    assert client_address(RequestFactory().get("/", REMOTE_ADDR="")) == ""


@pytest.mark.parametrize("environ, expected", [
    ({}, 0),
    ({"TRUSTED_PROXY_COUNT": "2"}, 2),
    ({"TRUST_X_FORWARDED_FOR": "1"}, 1),   # the deprecated spelling of one proxy
    ({"TRUST_X_FORWARDED_FOR": "off"}, 0),
    ({"TRUST_X_FORWARDED_FOR": "1", "TRUSTED_PROXY_COUNT": "1"}, 1),
])
def test_proxy_count_from_the_environment(environ, expected):
    assert proxy_count(environ) == expected


@pytest.mark.parametrize("environ, message", [
    ({"TRUSTED_PROXY_COUNT": "-1"}, "number of reverse proxies"),
    ({"TRUSTED_PROXY_COUNT": "yes"}, "number of reverse proxies"),
    ({"TRUST_X_FORWARDED_FOR": "1", "TRUSTED_PROXY_COUNT": "2"}, "remove TRUST_X_FORWARDED_FOR"),
    ({"TRUST_X_FORWARDED_FOR": "maybe"}, "set TRUSTED_PROXY_COUNT"),
])
def test_bad_settings_are_refused_clearly(environ, message):
    with pytest.raises(ValueError, match=message):
        proxy_count(environ)


def test_the_old_variable_still_works_with_a_deprecation_warning():
    env = {k: v for k, v in os.environ.items() if k not in ("TRUSTED_PROXY_COUNT",)}
    env |= {"TRUST_X_FORWARDED_FOR": "1", "DJANGO_SETTINGS_MODULE": "config.settings"}
    done = subprocess.run([sys.executable, "-c", "from django.conf import settings; print(settings.TRUSTED_PROXY_COUNT)"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
    assert "TRUST_X_FORWARDED_FOR is deprecated: set TRUSTED_PROXY_COUNT" in done.stderr
