"""Ownership of studies and model endpoints, with django-rules (object-level rules without tables).

A Study or a ModelEndpoint has an ``owner`` and a ``shared_with`` list; its members (the owner and the users
it is shared with) may use it, within their model permissions; superusers may use everything. Everything
else belongs to one of them through :data:`OWNED_BY` (an item, participant or run through its study …).

- :func:`visible` narrows a queryset to what a user may see (admin lists, API lists, command look-ups);
- :func:`may` / :func:`require` check one object (rule ``access.member``: ``user.has_perm("access.member", obj)``).
"""
from __future__ import annotations

from typing import Any

import rules
from django.core.exceptions import PermissionDenied
from django.db.models import Model, Q, QuerySet

#: model label → path to the object whose owner decides ("" for the object itself)
OWNED_BY: dict[str, str] = {
    "surveys.study": "",
    "analysis.studyanalysis": "",
    "elicitation.modelendpoint": "",
    "surveys.item": "study",
    "surveys.participant": "study",
    "surveys.recruitmentchannel": "study",
    "surveys.assignment": "participant__study",
    "surveys.response": "participant__study",
    "elicitation.elicitationrun": "study",
    "elicitation.modelresponse": "run__study",
    "prolific.prolificstudy": "study",
    "prolific.submission": "prolific_study__study",
}


def _path(model: type[Model]) -> str:
    try:
        return OWNED_BY[model._meta.label_lower]
    except KeyError:
        raise LookupError(f"{model._meta.label} has no owner (access.ownership.OWNED_BY)") from None


def _root_model(model: type[Model], path: str) -> type[Model]:
    for name in filter(None, path.split("__")):
        model = model._meta.get_field(name).related_model
    return model


def member_filter(user, model: type[Model]) -> Q:
    """The Q of ``model``'s rows whose owning study or endpoint has ``user`` as owner or in its sharing list."""
    path = _path(model)
    root = _root_model(model, path)
    concrete = root._meta.concrete_model
    members = concrete.objects.filter(Q(owner=user) | Q(shared_with=user)).values("pk")
    return Q(**{f"{path}__in" if path else "pk__in": members})


def visible(queryset: QuerySet, user) -> QuerySet:
    """``queryset`` narrowed to the rows ``user`` may see (all for superusers, none for anonymous users)."""
    if user is not None and user.is_active and user.is_superuser:
        return queryset
    if user is None or not user.is_authenticated:
        return queryset.none()
    return queryset.filter(member_filter(user, queryset.model))


def owner_of(obj: Model) -> Model:
    """The Study or ModelEndpoint whose owner decides about ``obj``."""
    for name in filter(None, _path(type(obj)).split("__")):
        obj = getattr(obj, name)
    return obj


@rules.predicate
def is_member(user, obj: Any) -> bool:
    """``user`` owns the study or endpoint of ``obj``, or it is shared with them (False without an object)."""
    if obj is None or user is None or not user.is_authenticated:
        return False
    root = owner_of(obj)
    return root.owner_id == user.pk or root.shared_with.filter(pk=user.pk).exists()


rules.add_perm("access.member", is_member)


def may(user, obj: Model | None) -> bool:
    """True when ``user`` may use ``obj`` (superusers always; None or a new, unsaved object: nothing to check,
    what it may be attached to is checked when it is chosen)."""
    if obj is None or obj.pk is None:
        return True
    return bool(user and user.is_active and user.has_perm("access.member", obj))


def require(user, obj: Model | None) -> None:
    """PermissionDenied unless :func:`may`."""
    if not may(user, obj):
        raise PermissionDenied("this belongs to another researcher (ask its owner to share it with you)")


def may_manage_sharing(user, obj: Model) -> bool:
    """Only the owner (or a superuser) changes who owns or shares a study or endpoint."""
    return bool(user and user.is_active and (user.is_superuser or (obj.pk is not None and obj.owner_id == user.pk)
                                             or obj.pk is None))


def may_see_reference(study: Model, user) -> bool:
    """Whether ``user`` may see the study ``study`` is scored against (True without one, and for ``None``: a
    command run without ``--as``). A report shows that study's participants too: raw PROLIFIC_PIDs only when
    both are the user's to see, else salted ids (a reference set before the loader checked its owner)."""
    if user is None or not getattr(study, "reference_study_id", None):
        return True
    return visible(type(study).objects.filter(pk=study.reference_study_id), user).exists()
