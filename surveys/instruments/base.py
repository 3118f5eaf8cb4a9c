"""What every item kind (instrument) defines, once, for both people and models."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Mapping, Sequence


from config import registry
from surveys.definition import wording as definition_wording
from surveys.condition_context import condition_values
from surveys.definition.files import shipped_definition
from surveys.report_options import ReportOption

from .shapes import (Answer, AnswerError, AnswerShape, Option, ParsedAnswer, ScaleShape, first_number,
                     plain_number)

if TYPE_CHECKING:  # pragma: no cover
    from surveys.models import Assignment, Item, Study

Speaker = tuple[str, str]  # (name, gender)


class ImportRowError(ValueError):
    """A row of an item file that cannot be imported; names the column at fault."""

    def __init__(self, column: str, message: str):
        super().__init__(message)
        self.column = column
        self.message = message


@dataclass(frozen=True)
class Demonstrations:
    """A kind's worked examples (items marked ``is_demonstration`` with a ``demo_answer``), shown on the
    instructions page and in few-shot prompts: the Item fields an example is edited with (its answer last) and
    how many a study of the kind must have before it is published (0: optional, shown when there are some)."""

    fields: tuple[str, ...]
    required: int = 0

    def problem(self, count: int) -> str:
        """Why ``count`` demonstrations are not enough for publishing ("" when they are)."""
        if count >= self.required:
            return ""
        return f"it needs {self.required} demonstrations (worked examples with their answers), it has {count}"


@dataclass
class Prompt:
    """A model prompt in both API styles, built from one text."""

    text: str  # completions style: the whole prompt, ending where the answer starts
    messages: list[dict[str, str]] = field(default_factory=list)  # chat style (elicitation.prompts.prompt_content picks one)
    shots: int = 0  # the demonstrations (worked examples) the prompt shows: what a run's labels say
    record: dict[str, Any] = field(default_factory=dict)  # what the prompt drew (e.g. a hint), stored with the answer


class Instrument:
    """Base class of an item kind. Subclasses live one per module in this package.

    The defaults below serve the numeric kinds (an answer from ``scale_min`` to ``scale_max``, scored in the
    21 bins of the analysis); a kind sets its own wording (``task_intro``, ``scale_ends``, ``sentence``,
    ``question``, ``prompt_block``, ``build_prompt``) and overrides what differs.

    Declarations every kind makes: ``shape`` (the answer's shape, surveys/instruments/shapes.py: how it is
    shown, validated, parsed and stored), ``prompt_styles`` (the prompt variants a run can choose,
    ``ElicitationRun.prompt_style``), ``report_sections`` (the names of the report sections that score it, looked
    up in config.registry; none by default), ``attention_filter_default`` (whether a new study of this kind applies
    its attention filter; off by default), ``attention_rule`` (the exclusion rule that filter applies, by name,
    surveys/definition/exclusion_rules.py; empty: the installed attention-filter rule), ``report_options`` (named
    choices its report sections take, surveys/report_options.py: its family declares them as readings
    ``<kind>.<option>``) and
    ``demonstrations`` (its worked examples' fields and how many it needs; None: the kind shows none).
    """

    name: ClassVar[str]
    label: ClassVar[str]
    template_name: ClassVar[str]
    shape: ClassVar[AnswerShape] = ScaleShape()
    prompt_styles: ClassVar[tuple[str, ...]] = ("standard",)
    report_sections: ClassVar[tuple[str, ...]] = ()
    attention_filter_default: ClassVar[bool] = False
    attention_rule: ClassVar[str] = ""
    demonstrations: ClassVar[Demonstrations | None] = None
    # A new run's prompt version is "<prefix>-<n>shot-v1" or "<prefix>-zero-shot-v1" (elicitation.prompts)
    prompt_version_prefix: ClassVar[str] = ""
    # Former defaults of ``ElicitationRun.prompt_version`` that runs of any kind may still hold: they count as a
    # default version for every kind (report names leave them out; elicitation/prompt_versions.py).
    legacy_prompt_versions: ClassVar[tuple[str, ...]] = ()
    # Choice kinds: the text after the last occurrence of this marker holds a chain-of-thought's final choice.
    final_choice_marker: ClassVar[str] = ""
    # CSV columns the item importer requires, in the order the template and the documentation list them;
    # then the columns it reads when present; and the example rows of the template CSV
    # (surveys/item_template.py: ``manage.py item_template KIND`` and the admin's import page).
    import_columns: ClassVar[tuple[str, ...]] = ()
    optional_columns: ClassVar[tuple[str, ...]] = ()
    # Kinds whose items have no expression: how many items a participant answers when the researcher does not
    # say (``create_study``), and why that many (printed). None: the kind draws by expression instead.
    default_items_per_participant: ClassVar[int | None] = None
    items_per_participant_reason: ClassVar[str] = ""
    template_rows: ClassVar[tuple[dict[str, str], ...]] = ()
    # Answer scale for numeric kinds.
    scale_min: ClassVar[float] = 0
    scale_max: ClassVar[float] = 100
    scale_step: ClassVar[float] = 5
    # The task description shared by the instructions page and the prompt.
    task_intro: ClassVar[str] = ""
    scale_ends: ClassVar[tuple[str, ...]] = ()

    # The definition file under studies/ whose wording a study of this kind uses when it was not loaded from a
    # file of its own (``Study.definition`` empty), or where its own leaves something unworded, e.g.
    # "<family>/study.toml".
    default_definition: ClassVar[str] = ""
    # Self-refinement (elicitation/refinement.py): the kind's ``elicitation.refinement.Refinement`` (its runs'
    # prompts, asks and readings), or a "module:attribute" naming one, resolved on first use; None: its answers
    # cannot be refined.
    refinement: ClassVar[Any] = None

    @classmethod
    def hooks(cls) -> dict[str, str]:
        """The hooks the core reads that this kind sets (``manage.py families`` lists them): hook → what it
        names (report sections, attention rule, prompt version prefix, refinement, former default versions)."""
        refinement = cls.refinement
        if refinement is not None and not isinstance(refinement, str):
            refinement = f"{type(refinement).__module__}.{type(refinement).__qualname__}"
        attention = ""
        if cls.attention_rule or cls.attention_filter_default:
            attention = (f"{cls.attention_rule or 'the installed rule'}, "
                         f"{'on' if cls.attention_filter_default else 'off'} by default")
        named = {"report sections": ", ".join(cls.report_sections), "attention filter": attention,
                 "prompt version prefix": cls.prompt_version_prefix,
                 "refinement": refinement or "",
                 "former default prompt versions": ", ".join(cls.legacy_prompt_versions)}
        return {hook: value for hook, value in named.items() if value}

    def refinement_hook(self) -> Any:
        """The kind's self-refinement (``refinement`` resolved), None when its answers cannot be refined."""
        if self.refinement is None:
            return None
        return registry.resolve(self.refinement, f"the {self.name} kind's refinement")

    @property
    def report_options(self) -> dict[str, ReportOption]:
        """The named readings its report sections take: the installed families' readings (config.registry, kind
        ``readings``) named ``<kind>.<option>``, in the order the families declare them."""
        prefix = f"{self.name}."
        return {name[len(prefix):]: registry.get("readings", name) for name in registry.names("readings")
                if name.startswith(prefix)}

    # --- wording -----------------------------------------------------------------
    def for_study(self, study: Any) -> "Instrument":
        """The instrument as ``study`` uses it: itself, or a copy whose ``prompt_styles`` add the styles the
        study's own definition declares (``[prompt.styles.NAME]``: a new prompt variant needs no Python)."""
        declared = ((getattr(study, "definition", None) or {}).get("prompt") or {}).get("styles") or {}
        extra = tuple(name for name in declared if name not in self.prompt_styles)
        if not extra:
            return self
        clone = copy.copy(self)
        clone.prompt_styles = (*self.prompt_styles, *extra)
        return clone

    def shipped_wording(self, language: str | None = None) -> Mapping[str, Any]:
        """The kind's shipped definition (``default_definition``; {}: none). A kind with one per language picks
        it by ``language`` (a study's or an item's language code)."""
        return shipped_definition(self.default_definition) if self.default_definition else {}

    def wording(self, study: Any) -> Mapping[str, Any]:
        """The definition ``study``'s wording comes from: its own, completed by the kind's shipped one where it
        words nothing (surveys.definition.wording.completed); the shipped one for a study without its own."""
        own = study.definition if study is not None and study.definition else {}
        return definition_wording.completed(own, self.shipped_wording(getattr(study, "language", None)))

    def item_wording(self, item: "Item") -> Mapping[str, Any]:
        """The definition ``item``'s page and prompt are worded by: as :meth:`wording`, the shipped part chosen
        by the item's language."""
        study = getattr(item, "study", None)
        own = study.definition if study is not None and study.definition else {}
        return definition_wording.completed(own, self.shipped_wording(getattr(item, "language", None)))

    def template_context(self, item: "Item", speaker: Speaker | None = None) -> dict[str, Any]:
        """What the item's templates see: its fields (surveys.definition.wording.item_fields), the study's named
        texts as ``wording``, and what the kind computes (kinds extend this)."""
        context = definition_wording.item_fields(item)
        wording = self.item_wording(item)
        context["wording"] = wording.get("wording") or {}
        if (condition := condition_values(wording)) is not None:  # a study with [[factors]] (its cell's values)
            context["condition"] = condition
        return context

    def _page(self, item: "Item", speaker: Speaker | None) -> dict[str, Any]:
        wording = self.item_wording(item)
        if not definition_wording.has_page(wording):
            raise NotImplementedError(f"{self.name}: no [page] templates")
        return definition_wording.page_text(wording, self.template_context(item, speaker))

    def sentence(self, item: "Item", speaker: Speaker | None = None) -> str:
        """The sentence shown above the question (``[page] sentence``)."""
        return self._page(item, speaker)["sentence"]

    def question(self, item: "Item", speaker: Speaker | None = None) -> str:
        """The question asked about the sentence (the legend of the answer scale; ``[page] question``)."""
        return self._page(item, speaker)["question"]

    def hints(self, item: "Item", speaker: Speaker | None = None) -> list[str]:
        """Lines shown under the question (``[page] hints``); without templates, what the ends of the scale
        mean."""
        if definition_wording.has_page(self.item_wording(item)):
            return self._page(item, speaker)["hints"]
        return list(self.scale_ends)

    def page_context(self, item: "Item", speaker: Speaker | None = None) -> dict[str, Any]:
        """Everything the participant page template needs for one item (its ``[page]`` templates rendered once)."""
        page = self._page(item, speaker)
        return {
            "sentence": page["sentence"],
            "question": page["question"],
            "hints": page["hints"],
            "options": self.page_options(item),
            "widget": self.shape.widget,
        }

    def slot_page_context(self, slot: "Assignment") -> dict[str, Any]:
        """The page context of a participant's slot: :meth:`page_context` with the slot's speaker, its options
        in the order drawn for the slot (``slot.option_order``, when the shape randomises them)."""
        context = self.page_context(slot.item, slot.speaker())
        order = list(getattr(slot, "option_order", None) or [])
        if order and context.get("options"):
            rank = {key: i for i, key in enumerate(order)}
            context["options"] = sorted(context["options"],
                                        key=lambda o: rank.get(getattr(o, "key", None), len(rank)))
        return context

    def option_order(self, item: "Item", seed: str) -> list[str]:
        """The option keys in the order a slot seeded with ``seed`` shows them; [] (the declared order) unless
        the kind draws an order per participant."""
        return []

    def page_options(self, item: "Item") -> list[Any]:
        """What the answer widget offers: the scale's values (scale kinds) or the item's options."""
        return self.shape.page_options(self, item)

    def options(self, item: "Item") -> list[Option]:
        """The labelled options of a choice or pick item (none for other shapes)."""
        return []

    def intro(self, language: str = "en") -> dict[str, Any]:
        """The task description shared by the instructions page and the prompt; a kind with wording in
        other languages returns it for ``language`` (the study's language)."""
        return {"task": self.task_intro, "scale_ends": list(self.scale_ends)}

    def study_intro(self, study: Any) -> dict[str, Any]:
        """The task description of ``study``'s instructions page: its definition's named texts
        ``wording.task_intro`` and ``wording.scale_ends`` where it has them, else :meth:`intro` in the study's
        language."""
        named = self.wording(study).get("wording") or {}
        if "task_intro" in named:
            ends = named.get("scale_ends") or []
            return {"task": named["task_intro"], "scale_ends": [ends] if isinstance(ends, str) else list(ends)}
        return self.intro(study.language)

    def prompt_block(self, item: "Item", with_answer: bool) -> str:
        """One question of the prompt, ending where the answer starts (followed by a demonstration's
        answer when ``with_answer``)."""
        raise NotImplementedError

    def build_prompt(self, item: "Item", demonstrations: list["Item"], few_shot: bool = True,
                     style: str = "standard") -> Prompt:
        """The model prompt for ``item`` in both API styles, from the same wording as the page; ``style`` is
        one of ``prompt_styles``. By default the study definition's ``[prompt]`` templates
        (surveys.definition.wording.assemble_prompt)."""
        wording = self.item_wording(item)
        if not definition_wording.has_prompt(wording):
            raise NotImplementedError(f"{self.name}: no [prompt] templates")
        demos = definition_wording.demo_contexts(list(demonstrations) if few_shot else [], self.prompt_context)
        text, messages, shots = definition_wording.assemble_prompt(wording, style, self.prompt_context(item), demos)
        return Prompt(text=text, messages=messages, shots=shots)

    def prompt_context(self, item: "Item") -> dict[str, Any]:
        """What the prompt templates see: the item's :meth:`template_context` and, where the definition words
        the page, ``page`` (the item's rendered ``sentence``, ``question`` and ``hints``), so that a prompt
        quotes the page without repeating its wording."""
        context = self.template_context(item)
        wording = self.item_wording(item)
        if definition_wording.has_page(wording):
            context["page"] = definition_wording.page_text(wording, context)
        return context

    def prompt_for_sample(self, item: "Item", demonstrations: list["Item"], few_shot: bool, style: str,
                          sample_index: int = 0, seed: int | None = None) -> Prompt:
        """The prompt of one sample (try) of ``item`` in a run with ``seed``: :meth:`build_prompt`'s, the same
        for every sample; a kind whose prompt draws something per try (e.g. a hint condition) overrides it."""
        return self.build_prompt(item, demonstrations, few_shot, style)

    def sends_temperature(self, style: str) -> bool:
        """Whether runs in ``style`` send the run's temperature (False: the provider's default decoding, as a
        paper's authors ran it; the stored request parameters then have no temperature)."""
        return True

    def chat_messages(self, system: str, demonstrations: Sequence["Item"], question: str) -> list[dict[str, str]]:
        """The chat form of a few-shot prompt: ``system``, then each demonstration as a user turn (its
        :meth:`prompt_block`) answered by the assistant with its answer, then ``question``."""
        messages = [{"role": "system", "content": system}]
        for demo in demonstrations:
            messages.append({"role": "user", "content": self.prompt_block(demo, with_answer=False)})
            messages.append({"role": "assistant", "content": f"{demo.demo_answer:g}"})
        messages.append({"role": "user", "content": question})
        return messages

    # --- answers -------------------------------------------------------------------
    def answer_options(self) -> list[float]:
        """The values a participant can choose."""
        count = int(round((self.scale_max - self.scale_min) / self.scale_step))
        return [self.scale_min + i * self.scale_step for i in range(count + 1)]

    def validate(self, raw: str) -> float:
        """A scale kind's submitted form value as a number on the scale; AnswerError otherwise."""
        raise NotImplementedError

    def validate_answer(self, item: "Item", data: Mapping[str, Any]) -> Answer:
        """A submitted form (the shape's fields) as a typed answer; AnswerError with a message for the page."""
        return self.shape.validate(self, item, data)

    def parse_model_answer(self, raw: str, item: "Item | None" = None) -> ParsedAnswer:
        """A model's raw output as a typed answer (or the reason it has none), by the shape. The raw text
        is kept by the caller. Scale kinds: the first number written in the text, if it lies on the scale."""
        return self.shape.parse(self, item, raw)

    def parse_interval(self, raw: str) -> ParsedAnswer:
        """Interval kinds: a model's raw output as (lower, upper)."""
        raise NotImplementedError

    def score(self, value: float) -> float:
        """The bin (answer category) a value falls in. Default: the centre c of the 0–100 bin with
        c − 2.5 ≤ v < c + 2.5, 97.5–100 → 100 (SPEC §6; ``surveys.answer_bins``, the single source of binning)."""
        from surveys.answer_bins import bin_centre  # numpy, imported when a score is wanted

        return bin_centre(value)

    # --- import --------------------------------------------------------------------
    def item_fields_from_row(self, row: Mapping[str, str]) -> dict[str, Any]:
        """Model fields for one row of an item file; ImportRowError names the bad column."""
        raise NotImplementedError

    def items_from_row(self, row: Mapping[str, str]) -> list[dict[str, Any]]:
        """The items one row of an item file becomes (one by default; the interval kind makes one per
        confidence level)."""
        return [self.item_fields_from_row(row)]

    def item_key(self, fields: Mapping[str, Any]) -> str:
        raise NotImplementedError

    def default_demonstrations(self, items: list["Item"]) -> list[dict[str, Any]]:
        """Fields of the two worked examples added to a study imported without any (none by default)."""
        return []

    # --- attention ---------------------------------------------------------------
    def canonical_order(self) -> list[str]:
        """Labels from highest to lowest expected answer, for the live attention check."""
        return []


__all__ = ["Answer", "AnswerError", "Demonstrations", "ImportRowError", "Instrument", "Option", "ParsedAnswer", "Prompt", "Speaker",
           "first_number", "plain_number"]
