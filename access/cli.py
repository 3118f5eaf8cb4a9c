"""``--as USER`` for the management commands: the command sees and changes only what USER may (their
studies and endpoints and those shared with them), and what it creates is theirs. Without ``--as`` a
command acts for the owner of what it names (whoever runs manage.py can read the database anyway)."""
from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from django.db.models import QuerySet

from config.permissions import can_see_raw_ids

from .ownership import visible


def add_as_argument(parser) -> None:
    parser.add_argument("--as", dest="as_user", metavar="USER", default=None,
                        help="act as this user: only their own and shared studies and endpoints; what is "
                             "created is theirs (default: act for the owner, no restriction)")


def acting_user(options: dict[str, Any]):
    """The user of ``--as`` (active staff), None without it; CommandError for an unknown or inactive one."""
    name = options.get("as_user")
    if not name:
        return None
    user = get_user_model().objects.filter(username=name, is_active=True).first()
    if user is None or not user.is_staff:
        raise CommandError(f"--as {name}: no active staff user with this name")
    return user


def scoped(queryset: QuerySet, user) -> QuerySet:
    """``queryset`` as ``user`` sees it (everything without ``--as``)."""
    return queryset if user is None else visible(queryset, user)


def may_see_raw_ids(user) -> bool:
    """Raw PROLIFIC_PIDs in a command's output: without ``--as``, or for a user with *view participant*."""
    return user is None or can_see_raw_ids(user)
