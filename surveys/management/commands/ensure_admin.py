"""python manage.py ensure_admin — a superuser to log in with, created once.

Creates the superuser ``admin`` when no superuser exists. Its password is ADMIN_PASSWORD when that
is set, otherwise a generated one written to VAR_DIR/admin-password.txt (mode 600) and printed.
Re-running changes nothing and prints the existing login.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import IntegrityError, transaction

USERNAME = "admin"


def password_file() -> Path:
    """Where a generated admin password is kept."""
    return Path(settings.VAR_DIR) / "admin-password.txt"


def write_secret(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by the owner only (mode 600), replacing the file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)


class Command(BaseCommand):
    help = ("Create the superuser 'admin' if no superuser exists (password: $ADMIN_PASSWORD, or generated "
            "and saved to VAR_DIR/admin-password.txt); otherwise print the existing login.")

    def handle(self, *args, **options):
        User = get_user_model()
        existing = list(User.objects.filter(is_superuser=True).order_by("id").values_list("username", flat=True))
        if existing:
            self._print_existing(existing)
            return
        from_env = os.environ.get("ADMIN_PASSWORD", "")
        user = User(username=USERNAME, is_staff=True, is_superuser=True)
        if from_env:
            try:
                validate_password(from_env, user)
            except ValidationError as exc:
                raise CommandError("ADMIN_PASSWORD is too weak: " + " ".join(exc.messages)) from None
        password = from_env or secrets.token_urlsafe(18)
        user.set_password(password)
        try:
            with transaction.atomic():
                user.save()
                if not from_env:  # saved with the user: no account whose password was lost
                    write_secret(password_file(), password + "\n")
        except IntegrityError:
            # another process created it at the same moment
            self._print_existing([USERNAME])
            return
        self.stdout.write(self.style.SUCCESS(f"created superuser {USERNAME!r}"))
        if from_env:
            self.stdout.write(f"  username: {USERNAME}\n  password: the value of ADMIN_PASSWORD")
        else:
            self.stdout.write(f"  username: {USERNAME}\n  password: {password}\n"
                              f"  (saved in {password_file()}, readable only by you)")

    def _print_existing(self, usernames: list[str]) -> None:
        self.stdout.write(f"superuser already exists: {', '.join(usernames)} (nothing changed)")
        if USERNAME in usernames and password_file().exists():
            self.stdout.write(f"  username: {USERNAME}\n  password: in {password_file()} (unless changed since)")
        else:
            self.stdout.write("  password: the one set when it was created (ADMIN_PASSWORD or createsuperuser); "
                              "to reset it: .venv/bin/python manage.py changepassword admin")
