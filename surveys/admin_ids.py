"""Admin lists and pages that name participants: raw PROLIFIC_PIDs only for users who may view participants
(``config.permissions.RAW_IDS``); everyone else sees the salted ``respondent_id`` of the combined export."""
from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from config.permissions import can_see_raw_ids

from .respondent_ids import hashed_id


def respondent_id(pid: str | None) -> str:
    """The salted hash of a PROLIFIC_PID (surveys.respondent_ids.hashed_id), "—" for none."""
    return hashed_id(pid) if pid else "—"


class RawIdsAdminMixin:
    """For a ModelAdmin: ``pid_fields`` (list columns, fields and searches that hold a raw PROLIFIC_PID) are
    replaced by ``respondent`` (the salted id) in lists and dropped from pages and searches for users who
    may not view participants. ``pid_of(obj)`` gives a row's PID."""

    pid_fields: tuple[str, ...] = ()

    def pid_of(self, obj) -> str | None:
        raise NotImplementedError

    @admin.display(description="respondent id")
    def respondent(self, obj) -> str:
        return respondent_id(self.pid_of(obj))

    def _hides(self, request: HttpRequest) -> bool:
        return not can_see_raw_ids(request.user)

    def _strip(self, names, request: HttpRequest, replace: bool = False) -> list:
        if not self._hides(request):
            return list(names)
        out = []
        for name in names:
            if name in self.pid_fields or any(name.startswith(f"{f}__") for f in self.pid_fields) \
                    or name.endswith("__prolific_pid"):
                if replace and "respondent" not in out:
                    out.append("respondent")
            else:
                out.append(name)
        return out

    def get_list_display(self, request):
        return self._strip(super().get_list_display(request), request, replace=True)

    def get_search_fields(self, request):
        return self._strip(super().get_search_fields(request), request)

    def get_fields(self, request, obj=None):
        return self._strip(super().get_fields(request, obj), request, replace=True)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return self._strip(fields, request, replace=bool(set(fields) & set(self.pid_fields)))
