"""The researcher's preview: the participant flow with its state in the session, writing nothing.

The preview walks the same steps and renders the same templates as a participant's visit, with a
sample of items drawn exactly like a participant's (surveys.assignment.draw_items / draw_speakers,
which only read). No Participant, Assignment or Response row is ever created.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from .assignment import draw_items, draw_speakers
from . import questionnaire
from .flow import Progress, Step, attention_rho, passes_attention
from .instruments import Answer, AnswerError
from .models import Assignment, Item, Study
from .question_answers import read_page
from .questions import several


@dataclass
class PreviewState:
    """Where a preview is: the step, the drawn slots (item id, speaker name, gender), the answers given and the
    questionnaire's answers (``about``: field name → typed value)."""

    step: Step = Step.CONSENT
    slots: list[tuple[int, str, str]] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)  # each answer's typed columns
    about: dict[str, Any] = field(default_factory=dict)

    def to_session(self) -> dict[str, Any]:
        return {"step": self.step.value, "slots": [list(s) for s in self.slots], "answers": list(self.answers),
                "about": dict(self.about)}

    @classmethod
    def from_session(cls, data: Any) -> "PreviewState":
        """The state saved by ``to_session``; a fresh preview if it is missing or unreadable."""
        try:
            return cls(step=Step(data["step"]), slots=[(int(i), str(n), str(g)) for i, n, g in data["slots"]],
                       answers=[dict(a) for a in data["answers"]], about=dict(data.get("about") or {}))
        except (KeyError, TypeError, ValueError):
            return cls()


def draw_preview_slots(study: Study, rng: random.Random | None = None) -> list[tuple[int, str, str]]:
    """A participant-like sample of (item id, speaker name, speaker gender), read-only."""
    rng = rng or random.Random()
    items = draw_items(study, rng)
    speakers = draw_speakers(study, len(items), rng)
    return [(item.id, *(spk or ("", ""))) for item, spk in zip(items, speakers)]


def preview_progress(study: Study, state: PreviewState) -> Progress:
    """Like ``flow.current_step``; for the item step the slot is an unsaved Assignment."""
    if state.step != Step.ITEM:
        return Progress(state.step, number=len(state.answers), total=len(state.slots))
    index = len(state.answers)
    item_id, name, gender = state.slots[index]
    item = Item.objects.select_related("study").get(pk=item_id, study=study)
    slot = Assignment(item=item, position=index + 1, speaker_name=name, speaker_gender=gender,
                      option_order=study.kind.option_order(item, f"preview:{study.slug}:{index}:{item.key}"))
    return Progress(Step.ITEM, slot=slot, number=index + 1, total=len(state.slots))


def preview_consent(state: PreviewState, agreed: bool, study: Study | None = None) -> None:
    """Agreeing goes on to the questionnaire asked before the items (when ``study`` has one), else the
    instructions."""
    if state.step == Step.CONSENT and agreed:
        before = study is not None and bool(questionnaire.study_fields(study, "before"))
        state.step = Step.QUESTIONNAIRE_BEFORE if before else Step.INSTRUCTIONS


def preview_questionnaire(study: Study, state: PreviewState, data: Any) -> questionnaire.QuestionnaireForm | None:
    """Validate a questionnaire page of the preview and keep its answers in the state; returns the bound form
    (not valid: shown again), or None when the preview is not at a questionnaire page (a stale form)."""
    when = {Step.QUESTIONNAIRE_BEFORE: "before", Step.QUESTIONNAIRE_AFTER: "after"}.get(state.step)
    if when is None:
        return None
    form = questionnaire.questionnaire_form(study, when, data)
    if form.is_valid():
        state.about.update(form.answers())
        state.step = Step.INSTRUCTIONS if when == "before" else Step.DONE
    return form


def preview_instructions(state: PreviewState) -> None:
    if state.step == Step.INSTRUCTIONS:
        state.step = Step.PLEDGE


def preview_pledge(study: Study, state: PreviewState, rng: random.Random | None = None) -> None:
    if state.step == Step.PLEDGE:
        state.slots = draw_preview_slots(study, rng)
        state.answers = []
        state.step = Step.ITEM if state.slots else Step.DONE


def preview_answer(study: Study, state: PreviewState, position: int, answer: Any) -> str:
    """Validate and keep an answer in the preview state; returns an error message ('' when accepted).
    ``answer``: the posted form, read by the instrument's answer shape (as surveys.flow.submit_answer)."""
    if state.step != Step.ITEM or position != len(state.answers) + 1:
        return ""  # stale form: ignored, the view shows the current step
    kind = study.kind
    item = Item.objects.get(pk=state.slots[position - 1][0])
    if several(study):  # [[questions]]: every question read; kept as one line per page ("sure = 6; chance = 85")
        page = read_page(study, item, answer)
        if not page.ok:
            return "; ".join(f"{key}: {message}" for key, message in page.errors.items())
        state.answers.append(Answer(free_text="; ".join(f"{g.question.key} = {g.answer.text()}"
                                                        for g in page.given)).columns())
    else:
        try:
            data = kind.shape.form_data(answer)
            if kind.shape.is_empty(data):
                return kind.shape.empty_message
            typed = kind.validate_answer(item, data)
        except AnswerError as exc:
            return str(exc)
        state.answers.append(typed.columns())
    if len(state.answers) == len(state.slots):
        state.step = Step.QUESTIONNAIRE_AFTER if questionnaire.study_fields(study, "after") else Step.DONE
    return ""


def preview_notes(study: Study) -> list[str]:
    """What keeps the study from working for participants as previewed (shown to the researcher only)."""
    notes = []
    if study.status != Study.Status.LIVE:
        notes.append(f"The study is {study.get_status_display().lower()}: participants cannot start it until "
                     "its status is Live.")
    if not study.main_items().exists():
        notes.append("The study has no items yet: import items first (participants would be told the study "
                     "is not ready).")
    spec, demos = study.kind.demonstrations, len(study.demonstrations())
    if spec is not None and spec.required and demos != spec.required:
        notes.append(f"The study has {demos} demonstration{'s' if demos != 1 else ''}; the instructions and the "
                     f"few-shot prompt of its kind show {spec.required} worked examples"
                     f"{' (it cannot be published to Prolific without them)' if demos < spec.required else ''}.")
    return notes


def preview_summary(study: Study, state: PreviewState) -> dict[str, Any]:
    """What would happen at completion: the live attention check and the code that would be sent."""
    items = Item.objects.in_bulk([s[0] for s in state.slots[: len(state.answers)]])
    typed = [(Answer.from_columns(a), items[s[0]]) for a, s in zip(state.answers, state.slots) if s[0] in items]
    pairs = [(a.value, i) for a, i in typed]
    order = study.kind.canonical_order()
    rho = attention_rho([a for a, i in pairs if not i.is_control],
                        [i.expression for a, i in pairs if not i.is_control], order) if order else None
    passed = passes_attention(rho, study.attention_threshold) if order else None
    code = study.failed_attention_code if passed is False else study.completion_code
    about = [(f.label, state.about.get(f.name)) for f in questionnaire.study_fields(study) if f.name in state.about]
    return {"rho": rho, "passed": passed, "code": code, "checked": bool(order),
            "answers": [(i, a.text()) for a, i in typed], "about": about}
