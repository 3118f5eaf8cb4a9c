"""Which environment variables may hold a model endpoint's API key.

An endpoint names the variable that holds its key; the worker sends that variable's value as the bearer
token to the endpoint's base URL. Anyone who may edit endpoints could otherwise name ``SECRET_KEY``,
``DATABASE_URL`` or ``ADMIN_PASSWORD`` and point the base URL at their own server. So only the variables the
operator allows may be used: ``MODEL_API_KEY_VARS`` (comma-separated names or shell-style patterns; default
``*_API_KEY``, e.g. ``OPENAI_API_KEY``), and never the platform's own secrets (:data:`NEVER`).
"""
from __future__ import annotations

import fnmatch
import re

from django.conf import settings

NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
NEVER = frozenset({"SECRET_KEY", "EXPORT_ID_SALT", "DATABASE_URL", "ADMIN_PASSWORD", "CELERY_BROKER_URL",
                   "CELERY_RESULT_BACKEND", "REDIS_URL", "CACHE_URL", "TEST_REDIS_URL", "TEST_AMQP_URL"})


class KeyVariableRefused(ValueError):
    """The endpoint names a variable that may not be sent as an API key."""


def allowed_patterns() -> list[str]:
    return list(getattr(settings, "MODEL_API_KEY_VARS", None) or ["*_API_KEY"])


def key_variable_problem(name: str) -> str:
    """Why ``name`` may not be used as an endpoint's key variable ("" when it may, or when it is empty)."""
    if not name:
        return ""
    patterns = allowed_patterns()
    hint = (f"allowed: {', '.join(patterns)} (the operator sets MODEL_API_KEY_VARS); "
            "a variable holding one of the platform's own secrets is never allowed")
    if not NAME.fullmatch(name):
        return f"{name[:100]!r} is not an environment variable name (capital letters, digits, _); {hint}"
    if name in NEVER or not any(fnmatch.fnmatchcase(name, p) for p in patterns):
        return f"the variable {name} may not be used as an API key; {hint}"
    return ""


def check_key_variable(name: str) -> None:
    """KeyVariableRefused with the reason unless ``name`` may be used."""
    problem = key_variable_problem(name)
    if problem:
        raise KeyVariableRefused(problem)
