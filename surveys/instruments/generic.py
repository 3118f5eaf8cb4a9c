"""A researcher's own study, worded only by its definition file (``[study] kind = "generic"``).

The registered instance (``generic``) is a template: :meth:`GenericInstrument.for_study` returns a new instance
configured from the study's ``definition["answer"]`` (a dumped ``surveys.definition.schema.AnswerTable``):

- ``shape = "scale"``: a number from ``min`` to ``max`` in steps of ``step`` (default 1), ``labels`` at any of
  its values, shown as ``widget = "buttons"`` or ``"slider"`` (:class:`LabelledScaleShape`); a model is asked
  for the number and its answer is the first number in its text, if it lies on the scale;
- ``shape = "choice"``: the researcher's ``options`` (key and label), optionally ``randomise``d per participant
  (the order drawn for a slot is stored in ``Assignment.option_order``); a model answers with a key or a label;
- ``shape = "pick"``: whole texts as large buttons (the item's ``options`` field, else ``[answer] options``);
- ``shape = "interval"``: a lower and an upper bound;
- ``shape = "free_text"``: the participant's own words, up to ``max_length`` characters; a model's raw answer.

Wording: ``[page]`` (``sentence``, ``question``, ``hints``) and ``[prompt]`` templates (Jinja2,
surveys/definition/templates.py, assembled by surveys/definition/wording.py) over the item's fields (its model
columns and ``extra``) and what the shape offers (``options``, ``scale_labels``, ``instruction``, …). When
``[prompt]`` sets no ``block``, a question of the prompt is the page's wording followed by the shape's answer
instruction (:meth:`GenericInstrument.answer_instruction`: "Answer with a single number from 1 to 7, where 1
means …"), then ``Answer:``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from surveys.definition import wording as definition_wording
from surveys.definition.templates import render

from .base import AnswerError, Instrument, Prompt, Speaker, plain_number
from .interval_text import read_interval
from .shapes import (Answer, AnswerShape, FreeTextShape, IntervalShape, LabelledScaleShape, Option,
                     OrderedChoiceShape, ParsedAnswer)

if TYPE_CHECKING:  # pragma: no cover
    from surveys.models import Item, Study

#: The prompt's question when ``[prompt] block`` is not set: the page's wording, then the answer instruction.
DEFAULT_BLOCK = ("{% if sentence %}{{ sentence }}\n{% endif %}{% if question %}{{ question }}\n{% endif %}"
                 "{% for hint in hints %}{{ hint }}\n{% endfor %}{{ instruction }}\nAnswer:"
                 "{% if with_answer %} {{ answer }}{% endif %}")
#: The completions prompt when ``[prompt] text`` is not set: the system text, the demonstrations, the question.
DEFAULT_TEXT = "{% if system %}{{ system }}\n\n{% endif %}{% for demo in demos %}{{ demo }}\n\n{% endfor %}{{ question }}"


def _plain(value: float) -> int | float:
    """A scale number as templates write it: ``7``, not ``7.0``."""
    return int(value) if float(value).is_integer() else value


def _quoted(text: str) -> str:
    return f"\u201c{text}\u201d"


class GenericInstrument(Instrument):
    """A study whose wording, answer shape and prompt come from its definition file (module docstring)."""

    name = "generic"
    label = "Your own study (definition file)"
    template_name = "surveys/items/generic.html"
    report_sections = ()
    attention_filter_default = False
    default_items_per_participant = 20
    items_per_participant_reason = "a researcher's own study; set [participants] items_per_participant"
    scale_min = 1
    scale_max = 7
    scale_step = 1

    def __init__(self, definition: Mapping[str, Any] | None = None, slug: str = ""):
        self.definition: dict[str, Any] = dict(definition or {})
        self.slug = slug
        questions = self.definition.get("questions") or []
        # With [[questions]] the study's own shape is its first question's (each question has its own:
        # surveys/questions.py question_kind).
        answer = (self.definition.get("answer") or (questions[0]["answer"] if questions else None)
                  or {"shape": "scale", "min": 1, "max": 7})
        self.answer = dict(answer)
        self.shape = self._shape(self.answer)
        if self.answer.get("shape", "scale") == "scale":
            self.scale_min = float(self.answer["min"])
            self.scale_max = float(self.answer["max"])
            self.scale_step = float(self.answer.get("step") or 1)
        styles = (self.definition.get("prompt") or {}).get("styles") or {}
        self.prompt_styles = ("standard", *[s for s in styles if s != "standard"])

    def for_study(self, study: "Study") -> "GenericInstrument":
        """A new instance configured from ``study.definition``."""
        return GenericInstrument(study.definition, study.slug)

    # --- configuration ---------------------------------------------------------------
    def _shape(self, answer: Mapping[str, Any]) -> AnswerShape:
        shape = answer.get("shape", "scale")
        if shape == "scale":
            labels = {float(k): str(v) for k, v in (answer.get("labels") or {}).items()}
            return LabelledScaleShape(labels, answer.get("widget") or "buttons")
        if shape in ("choice", "pick"):
            return OrderedChoiceShape(bool(answer.get("randomise")), name=shape)
        if shape == "interval":
            return IntervalShape()
        if shape == "free_text":
            return FreeTextShape(int(answer.get("max_length") or 2000))
        raise ValueError(f"unknown answer shape {shape!r}")

    @property
    def scale_labels(self) -> dict[float, str]:
        return dict(getattr(self.shape, "labels", {}))

    # --- wording -----------------------------------------------------------------------
    def shape_context(self, item: "Item", speaker: Speaker | None = None) -> dict[str, Any]:
        """What ``[page]`` templates see: the item's fields (and ``wording``), plus what the answer shape offers:
        ``options`` (key and label of each option), ``scale_min``, ``scale_max``, ``scale_step``,
        ``scale_labels`` (value → label) and ``instruction`` (:meth:`answer_instruction`)."""
        context = super().template_context(item, speaker)
        context.update({
            "options": [{"key": o.key, "label": o.text} for o in self.options(item)],
            "scale_min": _plain(self.scale_min), "scale_max": _plain(self.scale_max),
            "scale_step": _plain(self.scale_step),
            "scale_labels": {f"{v:g}": t for v, t in sorted(self.scale_labels.items())},
            "instruction": self.answer_instruction(item),
        })
        return context

    def template_context(self, item: "Item", speaker: Speaker | None = None) -> dict[str, Any]:
        """What ``[prompt]`` templates see: :meth:`shape_context` and the page as rendered (``sentence``,
        ``question``, ``hints``; an item field of the same name wins)."""
        return {**self._page(item, speaker), **self.shape_context(item, speaker)}

    def _page(self, item: "Item", speaker: Speaker | None) -> dict[str, Any]:
        if not definition_wording.has_page(self.definition):
            return {"sentence": "", "question": "", "hints": []}
        return definition_wording.page_text(self.definition, self.shape_context(item, speaker))

    def hints(self, item: "Item", speaker: Speaker | None = None) -> list[str]:
        return self._page(item, speaker)["hints"]

    def page_context(self, item: "Item", speaker: Speaker | None = None) -> dict[str, Any]:
        """The base context, plus ``scale`` (min, max, step, middle, labels placed in percent, buttons per row)
        for a scale and ``max_length`` for free text."""
        context = super().page_context(item, speaker)
        if isinstance(self.shape, LabelledScaleShape):
            values = self.answer_options()
            span = self.scale_max - self.scale_min
            middle = min(values, key=lambda v: (abs(v - (self.scale_min + self.scale_max) / 2), v))
            context["scale"] = {
                "min": f"{self.scale_min:g}", "max": f"{self.scale_max:g}", "step": f"{self.scale_step:g}",
                "middle": f"{middle:g}", "columns": min(len(values), 11),
                "labels": [{"value": f"{v:g}", "label": t, "percent": round(100 * (v - self.scale_min) / span, 2)}
                           for v, t in sorted(self.scale_labels.items())],
            }
        if isinstance(self.shape, FreeTextShape):
            context["max_length"] = self.shape.max_length
        return context

    def intro(self, language: str = "en") -> dict[str, Any]:
        """Nothing beyond the study's own instructions (``[texts] instructions``, shown by the page)."""
        return {"task": "", "scale_ends": []}

    def options(self, item: "Item") -> list[Option]:
        """The answer's options: for a pick, the item's own ``options`` field when it has one."""
        own = (item.extra or {}).get("options") if self.shape.name == "pick" else None
        if own:
            return [_option(o) for o in own]
        return [Option(str(o["key"]), str(o["label"])) for o in self.answer.get("options") or []]

    def option_order(self, item: "Item", seed: str) -> list[str]:
        """The option keys in the order a slot seeded with ``seed`` shows them; [] when the shape does not
        randomise (the declared order)."""
        shape = self.shape
        if not isinstance(shape, OrderedChoiceShape) or not shape.randomise:
            return []
        return shape.draw_order([o.key for o in self.options(item)], seed)

    def answer_instruction(self, item: "Item") -> str:
        """What the prompt asks for when ``[prompt]`` does not say: the number (scale, with what its labelled
        values mean), one option's key (choice, pick; the options listed with their keys), two bounds
        (interval) or the answer in the model's own words (free text)."""
        shape = self.shape.name
        if shape == "scale":
            low, high = f"{self.scale_min:g}", f"{self.scale_max:g}"
            step = f" in steps of {self.scale_step:g}" if self.scale_step != 1 else ""
            said = [f"{value:g} means {_quoted(text)}" for value, text in sorted(self.scale_labels.items())]
            where = ""
            if said:
                where = ", where " + (f"{', '.join(said[:-1])} and {said[-1]}" if len(said) > 1 else said[0])
            return f"Answer with a single number from {low} to {high}{step}{where}."
        if shape in ("choice", "pick"):
            listed = "\n".join(f"{o.key}. {o.text}" for o in self.options(item))
            return f"Options:\n{listed}\nAnswer with the key of one option."
        if shape == "interval":
            return "Answer with a lower and an upper bound, as [lower, upper]."
        return "Answer in your own words."

    def prompt_wording(self) -> dict[str, Any]:
        """The definition with the default prompt where ``[prompt]`` sets none: :data:`DEFAULT_BLOCK` (the page's
        wording, then the answer instruction) and :data:`DEFAULT_TEXT` (the completions prompt: system,
        demonstrations, question)."""
        prompt = dict(self.definition.get("prompt") or {})
        prompt["block"] = prompt.get("block") or DEFAULT_BLOCK
        prompt["text"] = prompt.get("text") or DEFAULT_TEXT
        return {**self.definition, "prompt": prompt}

    def _demo_context(self, item: "Item") -> dict[str, Any]:
        context = self.template_context(item)
        answer = (item.extra or {}).get("answer", (item.extra or {}).get("demo_choice"))
        if answer is None:
            answer = "" if item.demo_answer is None else f"{item.demo_answer:g}"
        context["answer"] = answer
        return context

    def prompt_block(self, item: "Item", with_answer: bool) -> str:
        templates = definition_wording.style_templates(self.prompt_wording()["prompt"], "standard")
        answer = render(templates["answer"] or "{{ answer }}", self._demo_context(item)) if with_answer else ""
        return render(templates["block"], {**self.template_context(item), "with_answer": with_answer,
                                           "answer": answer})

    def build_prompt(self, item: "Item", demonstrations: list["Item"], few_shot: bool = True,
                     style: str = "standard") -> Prompt:
        demos = [self._demo_context(d) for d in (demonstrations if few_shot else [])]
        text, messages, shots = definition_wording.assemble_prompt(self.prompt_wording(), style,
                                                                   self.template_context(item), demos)
        return Prompt(text=text, messages=messages, shots=shots)

    # --- answers ---------------------------------------------------------------------
    def validate(self, raw: str) -> float:
        value = plain_number(raw, self.answer_options())
        if value is None:
            raise AnswerError("Please choose one of the answers on the scale.")
        return value

    def parse_interval(self, raw: str) -> ParsedAnswer:
        reading = read_interval(raw)
        if not reading.ok:
            return ParsedAnswer(raw=raw, error=reading.error)
        return ParsedAnswer(raw=raw, answer=Answer(lower=reading.lower, upper=reading.upper))

    def score(self, value: float) -> float:
        """The scale value nearest ``value`` (a scale's points are its categories)."""
        return min(self.answer_options(), key=lambda v: (abs(v - value), v))


def _option(value: Any) -> Option:
    """An item's option written as {key, label}, [key, text] or a plain text (its own key)."""
    if isinstance(value, Mapping):
        return Option(str(value["key"]), str(value.get("label", value.get("text", ""))))
    if isinstance(value, (list, tuple)):
        return Option(str(value[0]), str(value[1]))
    return Option(str(value), str(value))
