from django.apps import AppConfig


class AccessConfig(AppConfig):
    """Who may see and change what: ownership and sharing of studies and endpoints (access.ownership, on
    django-rules) and the API token admin that shows key prefixes only (access.admin)."""

    name = "access"
    verbose_name = "access"

    def ready(self) -> None:
        from rest_framework.authtoken.models import TokenProxy

        from . import ownership  # noqa: F401 (registers the rules)
        from .tokens import key_prefix

        # the admin names a token by str(): its title, breadcrumbs, log and delete pages show a prefix only
        TokenProxy.__str__ = lambda token: key_prefix(token.key)
