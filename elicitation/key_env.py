"""Which environment variables may hold a model endpoint's API key, and to which hosts each may be sent.

An endpoint names the variable that holds its key; the worker sends that variable's value as the bearer
token to the endpoint's base URL. Anyone who may edit endpoints could otherwise name ``SECRET_KEY`` or
``DATABASE_URL``, or a real key with a base URL of their own server. So the operator binds each variable to the
hosts it may be sent to: ``MODEL_API_KEY_VARS`` is a comma-separated list of ``NAME@HOST[:PORT]`` entries, e.g.
``OPENAI_API_KEY@api.openai.com,VLLM_KEY@gpu-box.lab:8000`` (the default is ``OPENAI_API_KEY@api.openai.com``).

- ``NAME`` is a variable name or a shell-style pattern (``LAB_*_KEY``);
- ``HOST`` is compared with the host of the endpoint's base URL (case-insensitive, no patterns);
- ``PORT`` is the port; without it the scheme's default (443 for https, 80 for http); ``*`` for any port;
- repeat a name to allow it more hosts.

A key goes over https only: to an ``http://`` base URL only when its host is at an address the operator allows
in ``MODEL_ENDPOINT_ALLOWED_NETWORKS`` (a model server on this machine or the lab's network).

A variable the platform itself reads (its settings, the Prolific token, the admin password…) is never allowed,
whatever the entries say (:func:`platform_secrets`).
"""
from __future__ import annotations

import fnmatch
import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from config.env import names_read

from .destinations import SETTING as NETWORKS_SETTING, allowed_networks, embedded_ipv4, resolve

NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
DEFAULT = ["OPENAI_API_KEY@api.openai.com"]
# Read outside config.env (or only on demand): never allowed either.
NEVER = frozenset({"SECRET_KEY", "EXPORT_ID_SALT", "DATABASE_URL", "ADMIN_PASSWORD", "CELERY_BROKER_URL",
                   "CELERY_RESULT_BACKEND", "REDIS_URL", "CACHE_URL", "TEST_REDIS_URL", "TEST_AMQP_URL",
                   "PROLIFIC_API_TOKEN", "PROLIFIC_API_KEY"})
NEVER_PATTERNS = ("PROLIFIC_*", "DJANGO_*")


class KeyVariableRefused(ValueError):
    """The endpoint names a variable that may not be sent as an API key (to its host)."""


@dataclass(frozen=True)
class Binding:
    """One entry of MODEL_API_KEY_VARS: variables matching ``pattern`` may be sent to ``host`` at ``port``
    (None: the scheme's default port; 0: any port)."""

    pattern: str
    host: str
    port: int | None

    def allows(self, name: str, host: str, port: int, default_port: int) -> bool:
        port_ok = self.port == 0 or port == (default_port if self.port is None else self.port)
        return port_ok and host == self.host and fnmatch.fnmatchcase(name, self.pattern)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host + ("" if self.port is None else f":{self.port or '*'}")


HOST_PORT = re.compile(r"(\[[0-9a-f:.]+\]|[^:\[\]/@]+)(?::(\d{1,5}|\*))?")


def parse_entry(entry: str) -> Binding | str:
    """The binding an entry states, or why it is not one (a string)."""
    pattern, _, where = entry.strip().partition("@")
    match = HOST_PORT.fullmatch(where.strip().lower())
    if not pattern or not match:
        return (f"the entry {entry!r} of MODEL_API_KEY_VARS binds no host: write NAME@HOST[:PORT], e.g. "
                "OPENAI_API_KEY@api.openai.com")
    host, port = match.group(1).strip("[]"), match.group(2)
    return Binding(pattern, host, None if port is None else 0 if port == "*" else int(port))


def bindings() -> tuple[list[Binding], list[str]]:
    """The operator's bindings and the problems with the entries that are not bindings."""
    entries = getattr(settings, "MODEL_API_KEY_VARS", None) or DEFAULT
    parsed = [parse_entry(e) for e in entries]
    return [b for b in parsed if isinstance(b, Binding)], [p for p in parsed if isinstance(p, str)]


def platform_secrets() -> set[str]:
    """Every variable the platform itself reads: its settings (config.env records each name it reads), the
    Prolific token's variable and :data:`NEVER`."""
    return set(NEVER) | names_read() | {getattr(settings, "PROLIFIC_TOKEN_ENV", "") or "PROLIFIC_API_TOKEN"}


def _destination(base_url: str) -> tuple[str, int, int]:
    """The host, port and the scheme's default port of ``base_url``."""
    parts = urlsplit(base_url)
    default_port = 443 if parts.scheme.lower() == "https" else 80
    try:
        port = parts.port
    except ValueError:
        port = None
    return (parts.hostname or "").lower(), port or default_port, default_port


def key_variable_problem(name: str, base_url: str) -> str:
    """Why the value of ``name`` may not be sent as the key to ``base_url`` ("" when it may, or when ``name``
    is empty)."""
    if not name:
        return ""
    found, broken = bindings()
    hint = ("the operator binds each key variable to its hosts in MODEL_API_KEY_VARS (NAME@HOST[:PORT]); "
            "a variable the platform itself reads is never allowed")
    if not NAME.fullmatch(name):
        return f"{name[:100]!r} is not an environment variable name (capital letters, digits, _); {hint}"
    if name in platform_secrets() or any(fnmatch.fnmatchcase(name, p) for p in NEVER_PATTERNS):
        return f"the variable {name} may not be used as an API key: the platform reads it itself; {hint}"
    host, port, default_port = _destination(base_url)
    if any(binding.allows(name, host, port, default_port) for binding in found):
        return cleartext_problem(name, base_url, host)
    allowed = sorted({str(b) for b in found if fnmatch.fnmatchcase(name, b.pattern)})
    where = f"it may only be sent to {', '.join(allowed)}" if allowed else "no host is allowed for it"
    problems = f" ({'; '.join(broken)})" if broken else ""
    return (f"the variable {name} may not be sent as an API key to {host or base_url}:{port}: {where}; "
            f"{hint}{problems}")


def cleartext_problem(name: str, base_url: str, host: str) -> str:
    """Why the key in ``name`` may not travel to ``base_url`` in clear text ("" when it may): a key goes over
    https only, unless every address of the host lies in a network the operator allows in
    MODEL_ENDPOINT_ALLOWED_NETWORKS (a model server on this machine or the lab's private network)."""
    if urlsplit(base_url).scheme.lower() == "https":
        return ""
    allowed = allowed_networks()
    try:
        addresses = [embedded_ipv4(ipaddress.ip_address(a.split("%", 1)[0])) for a in resolve(host, 80)]
    except (OSError, UnicodeError, ValueError):
        addresses = []
    if addresses and allowed and all(any(ip.version == net.version and ip in net for net in allowed)
                                     for ip in addresses):
        return ""
    return (f"the variable {name} may not be sent as an API key over http to {host or base_url}: a key is sent "
            f"over https only, unless the host is at an address the operator allows in {NETWORKS_SETTING} "
            "(a model server on a private network); use https://")


def check_key_variable(name: str, base_url: str) -> None:
    """KeyVariableRefused with the reason unless ``name`` may be sent to ``base_url``."""
    problem = key_variable_problem(name, base_url)
    if problem:
        raise KeyVariableRefused(problem)
