"""The overprecision demo study (Bahaj et al.): 52 general-knowledge questions with numeric answers written
for this project (overprecision-questions.csv: id, question, answer, source = the topic), each asked at the five
confidence levels (260 items), imported through surveys.importers.import_items like any researcher's file."""
from __future__ import annotations

from pathlib import Path

from surveys.importers import import_items
from surveys.instruments.interval_confidence import IntervalConfidence
from surveys.models import Study

QUESTIONS_FILE = Path(__file__).resolve().parent / "overprecision-questions.csv"
SLUG = "demo-overprecision"
TEXTS = {
    "title": "Ranges you are sure of (demo)",
    "description": ("Demo study shipped with hedgelab (Bahaj et al.'s overprecision design): 52 general-knowledge "
                    "questions with numeric answers, each at the confidence levels 60, 70, 80, 90 and 95 % "
                    "(260 items); each participant answers 10 of them."),
    "consent_text": ("Thank you for your interest in this study. It is part of a research project on how sure people "
                     "are of what they know. It takes about 5 minutes.\n\nWhat you will do: answer 10 general-"
                     "knowledge questions with a range of numbers. What we collect: your Prolific ID, your answers "
                     "and how long each page took; nothing else. Taking part is voluntary; you can stop at any time."),
    "instructions": ("Please answer from memory. Type the lower bound first and the upper bound second; decimals "
                     "and negative numbers are allowed."),
    "pledge_text": ("Please answer on your own, from memory, without search engines, calculators or AI assistants. "
                    "There is no penalty for wide ranges: give the range that matches how sure you are."),
}


def load_overprecision_demo() -> tuple[Study, bool, str]:
    """Create the live study ``demo-overprecision`` unless it exists: (study, created, message)."""
    existing = Study.objects.filter(slug=SLUG).first()
    if existing is not None:
        return existing, False, f"{SLUG}: already exists ({existing.main_items().count()} items); left unchanged"
    study = Study.objects.create(slug=SLUG, status=Study.Status.LIVE, instrument="interval_confidence",
                                 items_per_participant=IntervalConfidence.default_items_per_participant, **TEXTS)
    result = import_items(study, QUESTIONS_FILE)
    return study, True, (f"{SLUG}: created, live, {result.created} items (52 questions × 5 confidence levels); "
                         f"completion code {study.completion_code}")
