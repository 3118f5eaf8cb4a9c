"""The persona-mirror example (studies/examples/persona-mirror/) loaded with its agents replaced, and
participants with questionnaire answers, for the agents' and personas' tests."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import tomli_w
from django.utils import timezone

from surveys.definition.loader import Loaded, files_beside, load
from surveys.models import Participant, Study

EXAMPLE = Path(__file__).resolve().parents[1] / "studies" / "examples" / "persona-mirror" / "study.toml"


def example_text(agents: list[dict[str, Any]] | None = None) -> str:
    """The example's TOML with its ``[[agents]]`` replaced by ``agents`` (None: as shipped; []: none)."""
    text = EXAMPLE.read_text(encoding="utf-8")
    if agents is None:
        return text
    head = re.split(r"\n# A model agent", text)[0].rstrip() + "\n"
    for table in agents:  # as [[agents]] tables (tomli_w writes a list of flat tables inline)
        plain = {k: v for k, v in table.items() if k != "persona"}
        head += "\n[[agents]]\n" + tomli_w.dumps(plain)
        if "persona" in table:
            head += "\n[agents.persona]\n" + tomli_w.dumps(table["persona"])
    return head


def load_example(agents: list[dict[str, Any]] | None = None, **options: Any) -> Loaded:
    return load(example_text(agents), str(EXAMPLE), files_beside(EXAMPLE), **options)


def participant(study: Study, pid: str, *, status: str = "completed", is_test: bool = False,
                **answers: Any) -> Participant:
    return Participant.objects.create(study=study, prolific_pid=pid, status=status, is_test=is_test,
                                      questionnaire=answers,
                                      completed_at=timezone.now() if status == "completed" else None)


PEOPLE = [{"age": 30, "gender": "woman", "first_language": "English"},
          {"age": 64, "gender": "man", "first_language": "Spanish"}]
TEMPLATE = "You are a {{ age }}-year-old {{ gender }} whose first language is {{ first_language }}."


def agent(name: str = "mirror", **fields: Any) -> dict[str, Any]:
    """An agent table on the stub endpoint (greedy, no persona unless given)."""
    return {"name": name, "endpoint": "stub", "mode": "greedy", **fields}
