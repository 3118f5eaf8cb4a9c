"""What loading one demo study did (surveys/demo/loader.py and the family demo modules beside it report it)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from surveys.models import Study


@dataclass
class LoadOutcome:
    study: Study
    created: bool
    message: str
