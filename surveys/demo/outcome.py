"""What loading one demo study did (``load_demo``'s report line)."""
from __future__ import annotations

from dataclasses import dataclass

from surveys.models import Study


@dataclass
class LoadOutcome:
    study: Study
    created: bool
    message: str
