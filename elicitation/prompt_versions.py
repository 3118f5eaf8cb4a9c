"""A run's prompt version: the default a new run gets (``ElicitationRun.save``), from how many demonstrations
its prompts show. Below the models (they import no model at run time); prompt building is elicitation/prompts.py.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from surveys.instruments import instruments

if TYPE_CHECKING:  # pragma: no cover
    from surveys.models import Study

# The field's default: a new run left at it gets its kind's version (:func:`default_prompt_version`) at creation.
PROMPT_VERSION_DEFAULT = "kind-default"


def prompt_shots(run: Any) -> int:
    """How many demonstrations ``run``'s prompts show, read from the prompt of its first item (0 for a
    self-refinement run, or a run without items)."""
    if getattr(run, "refines_id", None) is not None:
        return 0
    study = run.study
    item = run.target_items().order_by("id").first() if run.pk else study.main_items().order_by("id").first()
    if item is None:
        return 0
    return study.kind.build_prompt(item, study.demonstrations(), run.few_shot, run.prompt_style).shots


def shots_label(shots: int) -> str:
    """``zero-shot`` or ``2-shot``."""
    return f"{shots}-shot" if shots else "zero-shot"


def version_prefix(study: Study) -> str:
    """The prefix of the prompt versions of ``study``'s runs: its kind's, else the kind's name."""
    return study.kind.prompt_version_prefix or study.kind.name.replace("_", "-")


def default_prompt_version(study: Study, shots: int) -> str:
    """The prompt version a new run gets unless one is given, from its kind's ``prompt_version_prefix``:
    ``<prefix>-2shot-v1`` for a prompt with two demonstrations, ``<prefix>-zero-shot-v1`` for one without."""
    return f"{version_prefix(study)}-{shots}shot-v1" if shots else f"{version_prefix(study)}-zero-shot-v1"


def is_default_prompt_version(study: Study, version: str) -> bool:
    """Whether ``version`` is one a run gets by default (report names then leave it out): its kind's, the field's
    default, or a former default of the field that runs of every kind stored (``Instrument.legacy_prompt_versions``)."""
    pattern = rf"{re.escape(version_prefix(study))}-(zero-shot|\d+shot)-v1"
    return (version == PROMPT_VERSION_DEFAULT or re.fullmatch(pattern, version) is not None
            or version in _legacy_versions())


def _legacy_versions() -> frozenset[str]:
    return frozenset(v for kind in instruments() for v in kind.legacy_prompt_versions)
