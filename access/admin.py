"""API tokens in the admin: a key prefix only. The full key is shown once, in the message after it is
created (as DRF's and Knox's conventions have it); afterwards nobody reads it here, whatever their
permissions."""
from __future__ import annotations

from django.contrib import admin, messages
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from .tokens import key_prefix

admin.site.unregister(TokenProxy)


@admin.register(TokenProxy)
class ApiTokenAdmin(TokenAdmin):
    list_display = ("prefix", "user", "created")

    @admin.display(description="key (prefix)")
    def prefix(self, obj: TokenProxy) -> str:
        return key_prefix(obj.key)

    def response_add(self, request, obj, post_url_continue=None):
        response = super().response_add(request, obj, post_url_continue)
        messages.warning(request, f"API token for {obj.user}: {obj.key} (copy it now: it is not shown again).")
        return response
