"""Whether a study is a verifiable set: one whose items carry a truth value (the reports read such a study as
the ``v`` set, its ``reference_study`` as the ``nv`` one)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from surveys.models import Study


def is_verifiable(study: Study) -> bool:
    """A study is a verifiable set when any of its main items has a truth value."""
    return study.main_items().exclude(truth="").exists()
