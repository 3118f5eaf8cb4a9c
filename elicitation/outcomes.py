"""What a model's reply becomes: the parts of a completion that are stored (``Completion``, per position
``TokenLogprobs``) and the answer written to its ModelResponse row (``Outcome``). Shared by the modes
(elicitation/modes.py), the likelihood mode and self-refinement, which import it rather than each other.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class TokenLogprobs:
    """One generated position: the chosen token, its logprob and the top alternatives."""

    token: str
    logprob: float
    top: list[tuple[str, float]]


@dataclass
class Completion:
    """The parts of a completion reply that are stored."""

    text: str
    positions: list[TokenLogprobs] | None
    prompt_tokens: int | None
    completion_tokens: int | None
    system_fingerprint: str
    finish_reason: str


@dataclass
class Outcome:
    """A model answer ready to be written to its ModelResponse row."""

    status: str
    raw_output: str
    value: float | None = None
    bin: float | None = None
    choice: str = ""
    lower: float | None = None
    upper: float | None = None
    text: str = ""  # a free-text answer (the raw output, stripped)
    parse_error: str = ""
    distribution: dict[str, float] | None = None
    coverage: float | None = None
    detail: dict[str, Any] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    system_fingerprint: str = ""
    error: str = ""
    requests: int = 1  # requests the answer took (for estimating tokens the endpoint did not report)

    def answer_columns(self) -> dict[str, Any]:
        """The typed answer columns written to the ModelResponse row."""
        return {"value": self.value, "bin": self.bin, "choice": self.choice, "lower": self.lower,
                "upper": self.upper, "text": self.text}
