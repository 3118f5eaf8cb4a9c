"""Generic studies (a researcher's own, worded by a definition) for tests: made directly from a validated
definition, without the loader, so the answer shapes are tested on their own."""
from __future__ import annotations

from typing import Any

from surveys.definition.schema import Definition
from surveys.models import Item, Study

SCALE_1_7 = {"shape": "scale", "min": 1, "max": 7, "labels": {"1": "Not at all", "4": "Neither", "7": "Completely"}}
CHOICE = {"shape": "choice", "randomise": True,
          "options": [{"key": "agree", "label": "I agree"}, {"key": "unsure", "label": "I am not sure"},
                      {"key": "disagree", "label": "I disagree"}, {"key": "na", "label": "Does not apply"}]}
FREE_TEXT = {"shape": "free_text", "max_length": 200}
QUESTIONS = {"scale": "How much do you agree?", "choice": "Do you agree?", "free_text": "Why?",
             "pick": "Which one?", "interval": "Between which numbers?"}


def generic_study(slug: str, answer: dict[str, Any], *, items: int = 3, prompt: dict[str, Any] | None = None,
                  live: bool = True, **study_fields: Any) -> Study:
    """A live generic study answered by ``answer`` (an ``[answer]`` table) with ``items`` statements."""
    definition = Definition.model_validate({
        "study": {"slug": slug, "title": f"Study {slug}", "kind": "generic"},
        "answer": answer,
        "page": {"sentence": "{{ statement }}", "question": QUESTIONS[answer["shape"]],
                 "hints": ["Topic: {{ topic }}"]},
        "prompt": prompt or {},
        "texts": {"instructions": "Read each statement and answer."},
    }).model_dump(mode="json")
    study = Study.objects.create(
        slug=slug, title=f"Study {slug}", instrument="generic", definition=definition,
        status=Study.Status.LIVE if live else Study.Status.DRAFT, items_per_participant=items,
        controls_per_participant=0, draw_speaker_names=False,
        consent_text="You are invited to a short study.", instructions="Read each statement and answer.",
        pledge_text="I will answer carefully.", **study_fields)
    for n in range(1, items + 1):
        Item.objects.create(study=study, key=f"s{n}", statement=f"Statement number {n} is true.",
                            extra={"topic": f"topic {n}"})
    return study
