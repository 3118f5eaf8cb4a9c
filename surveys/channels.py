"""Recruitment channels: ways into a study besides Prolific (surveys.models.RecruitmentChannel).

- A channel's entry link is the study link with ``channel=<name>`` and, when the channel names one, the URL
  parameter carrying the participant's id on that platform (``?channel=sona&id=%SURVEY_CODE%``); without an
  id parameter the platform assigns each new entry an id (a mailing list), and the browser's session brings
  the same person back.
- Their id is stored as ``<channel>-<id>``, so the same id on two channels is two people and never a Prolific
  PID (24 hex characters, no hyphen).
- At the end they are sent to the channel's completion address with ``{code}`` and ``{id}`` filled in; a page
  that ends their visit early (declined, ended, a refused link) offers "Back to <channel>" when the channel
  has a ``return_url``.
  A link without ``channel`` is Prolific's, exactly as before.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Mapping
from urllib.parse import quote, urlencode, urlsplit

from django.conf import settings
from django.utils.translation import gettext as _

from .completion_urls import fill
from .models import PROLIFIC_CHANNEL, Participant, RecruitmentChannel, Study

CHANNEL_PARAM = "channel"
#: The longest id a channel may bring (``<channel>-<id>`` fits the 64 characters of a participant id).
MAX_ID = 64 - 16 - 1


class ChannelError(ValueError):
    """The link names a channel this study does not have, or a malformed id; ``title`` and ``message`` are for
    the participant's problem page."""

    def __init__(self, title: str, message: str):
        super().__init__(message)
        self.title, self.message = title, message


def channel_of(study: Study, params: Mapping[str, str]) -> RecruitmentChannel | None:
    """The channel a link names (None: Prolific, the default); ChannelError for a name the study lacks."""
    name = (params.get(CHANNEL_PARAM) or "").strip()
    if not name or name == PROLIFIC_CHANNEL:
        return None
    channel = RecruitmentChannel.objects.filter(study=study, name=name).first()
    if channel is None:
        raise ChannelError(_("This link is not valid"),
                           _("The address names a way into this study that does not exist. Please open the "
                             "study again with the link you were given."))
    return channel


def named_channel(study: Study, params: Mapping[str, str]) -> RecruitmentChannel | None:
    """The existing channel a link names, or None (Prolific, or a name the study lacks)."""
    try:
        return channel_of(study, params)
    except ChannelError:
        return None


def names_other_channel(params: Mapping[str, str]) -> bool:
    """Whether a link names a channel besides Prolific (existing or not): its pages then never name Prolific."""
    return (params.get(CHANNEL_PARAM) or "").strip() not in ("", PROLIFIC_CHANNEL)


def has_channels(study: Study) -> bool:
    """Whether ``study`` has channels besides Prolific: a page that cannot tell which one a person came
    through then names none."""
    return RecruitmentChannel.objects.filter(study=study).exists()


def brings_id(channel: RecruitmentChannel, params: Mapping[str, str]) -> bool:
    """Whether the link itself says who the participant is (else the session does, or a new id is made)."""
    return bool(channel.id_param and (params.get(channel.id_param) or "").strip())


def participant_key(channel: RecruitmentChannel, params: Mapping[str, str]) -> str:
    """The stored id (``<channel>-<id>``) of the participant a channel link names, or a fresh one."""
    if not channel.id_param:
        return f"{channel.name}-{secrets.token_hex(12)}"
    value = (params.get(channel.id_param) or "").strip()
    if not value:
        raise ChannelError(_("This link is missing your id"),
                           _("The address has no %(name)s. Please open the study again with the link you were "
                             "given.") % {"name": channel.id_param})
    if len(value) > MAX_ID or not value.replace("-", "").replace("_", "").isalnum() or "%" in value:
        raise ChannelError(_("This link has an invalid id"),
                           _("The %(name)s in the address (%(value)s) is not valid: it should be 1 to %(max)s "
                             "letters, digits, hyphens or underscores.")
                           % {"name": channel.id_param, "value": repr(value[:80]), "max": MAX_ID})
    return f"{channel.name}-{value}"


def channel_name(participant: Participant) -> str:
    """The channel's name for exports and reports ("prolific" for the default)."""
    return participant.channel.name if participant.channel_id else PROLIFIC_CHANNEL


@dataclass(frozen=True)
class Completion:
    url: str  # empty: show the code, send them nowhere
    platform: str  # the name the page uses ("Prolific", or the channel's)


def prolific_completion_url(code: str) -> str:
    """Prolific's completion address for ``code`` (settings.PROLIFIC_COMPLETE_URL)."""
    return f"{settings.PROLIFIC_COMPLETE_URL}?{urlencode({'cc': code})}"


def prolific_home_url() -> str:
    """Prolific's participant app (the origin of settings.PROLIFIC_COMPLETE_URL), where a participant who
    declined returns the study."""
    parts = urlsplit(settings.PROLIFIC_COMPLETE_URL)
    return f"{parts.scheme}://{parts.netloc}/"


def completion(participant: Participant, code: str) -> Completion:
    """Where a participant who finished with ``code`` goes: Prolific's completion address, or their channel's
    ``completion_url`` with ``{code}`` and ``{id}`` filled in."""
    if not participant.channel_id:
        return Completion(prolific_completion_url(code), "Prolific")
    channel = participant.channel
    own_id = participant.prolific_pid.removeprefix(f"{channel.name}-")
    url = fill(channel.completion_url, quote(code, safe=""), quote(own_id, safe=""))
    return Completion(url, channel.name)


@dataclass(frozen=True)
class ReturnLink:
    url: str
    name: str  # the channel's name, in "Back to <name>"


def return_link(channel: RecruitmentChannel | None) -> ReturnLink | None:
    """The "Back to <channel>" link of a page that ends a channel participant's visit early (declined, ended,
    refused): the channel's ``return_url``, or None (Prolific's participants, or a channel without one)."""
    if channel is None or not channel.return_url:
        return None
    return ReturnLink(channel.return_url, channel.name)


def entry_link(channel: RecruitmentChannel, base: str | None = None) -> str:
    """The link to give out on the channel (its id parameter left with a placeholder to fill in there)."""
    base = (base or settings.SITE_URL).rstrip("/")
    query = f"{CHANNEL_PARAM}={quote(channel.name)}"
    if channel.id_param:
        query += f"&{channel.id_param}=<their id>"
    return f"{base}/s/{channel.study.slug}/?{query}"
