"""The schema of a study definition file (TOML), as pydantic v2 models.

Every table refuses keys it does not know (``extra="forbid"``), so a misspelt key is an error naming its path,
never silently ignored. ``json_schema()`` is the JSON Schema editors complete keys from (published in the docs as
``docs/reference/study-definition.schema.json``). Templates are Jinja2 strings (surveys/definition/templates.py).

Format 1 tables: ``[study]``, ``[answer]``, ``[texts]``, ``[wording]``, ``[page]``, ``[prompt]`` (``[prompt.styles.NAME]``),
``[[demonstrations]]``, ``[design]``, ``[participants]``, ``[[questionnaire]]``, ``[prolific]``, ``[report]``,
``[[agents]]`` (with ``[agents.persona]``), ``[[checks]]`` and ``[check_failures]`` (surveys/checks.py),
``[[exclusions]]`` (surveys/definition/exclusion_rules.py); the experimental design: ``[[factors]]``, ``[conditions]``,
``[blocks]`` (surveys/definition/design_schema.py); several questions per item: ``[[questions]]``
(surveys/questions.py).
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_serializer, model_validator

from config import registry  # what the installed families contribute: kinds, sections, metrics, rules

from .design_schema import BlocksTable, ConditionsTable, FactorTable, check_design
from .design_schema import crossing as _crossing
from .exclusion_rules import params_problems, rule_names  # the exclusion rules (no Django)

FORMAT = 1
KINDS = tuple(registry.names("instruments"))  # the installed families' item kinds
RULE_NAMES = rule_names()


def repeated(values: Iterable[str]) -> list[str]:
    """The values that occur more than once, sorted."""
    seen = Counter(values)
    return sorted(v for v, n in seen.items() if n > 1)


#: The design tables: left out of a definition's dump when it declares none (a study without them is stored,
#: hashed and exported exactly as before they existed).
DESIGN_TABLES = ("factors", "conditions", "blocks")


def _without_empty(dump: dict[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    return {k: v for k, v in dump.items() if not (k in keys and v in (None, [], {}))}


class Table(BaseModel):
    """A definition table: unknown keys are refused, and values are taken strictly as the type they are
    written in (``max = "7"`` is not the number 7, ``integer = "yes"`` not true; a whole number is a number)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True)


class StudyTable(Table):
    """``[study]``: what the study is called and which family logic it uses."""

    slug: str = Field(pattern=r"^[-a-zA-Z0-9_]+$", max_length=50, description="In the participant link /s/SLUG/.")
    title: str = Field(min_length=1, max_length=200, description="For researchers (lists, reports, exports).")
    participant_title: str = Field("", max_length=200, description="The title participants see in each page's "
                                   "header and browser tab, in the study's language; empty: the title.")
    language: Literal["en", "zh-hans"] = "en"
    kind: Literal[KINDS] = Field("generic", description="The family logic (parsers, generators, metrics) the "
                                 "study uses; `generic` for a researcher's own study, worded only by this file.")
    description: str = ""
    reference: str = Field("", description="Slug of the study this one is scored against (a verifiable set's "
                           "non-verifiable companion); it must exist when this file is loaded.")


class Option(Table):
    """One answer option: the key stored and the label shown."""

    key: str = Field(min_length=1, max_length=40)
    label: str = Field(min_length=1)


class AnswerTable(Table):
    """``[answer]``: the answer's shape and its settings."""

    shape: Literal["scale", "choice", "pick", "interval", "free_text"] = "scale"
    min: float | None = None
    max: float | None = None
    step: float | None = None
    labels: dict[str, str] = Field(default_factory=dict,
                                   description="Scale labels by value, e.g. {\"1\" = \"Not at all\", \"7\" = \"Completely\"}.")
    widget: Literal["buttons", "slider"] = "buttons"
    options: list[Option] = Field(default_factory=list)
    randomise: bool = Field(False, description="Choice: show the options in a random order per participant "
                            "(the order shown is stored).")
    max_length: int = Field(2000, ge=1, le=100_000, description="Free text: the longest answer accepted.")

    @model_validator(mode="after")
    def _coherent(self) -> "AnswerTable":
        if self.shape == "scale":
            if self.min is None or self.max is None:
                raise ValueError("a scale needs min and max")
            if self.min >= self.max:
                raise ValueError(f"scale min ({self.min:g}) must be below max ({self.max:g})")
            step = 1 if self.step is None else self.step
            if step <= 0:
                raise ValueError("scale step must be positive")
            count = (self.max - self.min) / step
            if abs(count - round(count)) > 1e-9:
                raise ValueError(f"scale step {step:g} does not divide {self.min:g}–{self.max:g}")
            if round(count) > 1000:
                raise ValueError("a scale has at most 1001 points")
            for key in self.labels:
                try:
                    value = float(key)
                except ValueError:
                    raise ValueError(f"scale label key {key!r} is not a number") from None
                if not self.min <= value <= self.max:
                    raise ValueError(f"scale label at {key} lies outside {self.min:g}–{self.max:g}")
        if self.shape == "choice" and not self.options:
            raise ValueError("a choice needs at least one option (answer.options is empty)")
        if duplicates := repeated(o.key for o in self.options):
            raise ValueError(f"option keys repeat: {', '.join(duplicates)}")
        return self

    def scale_values(self) -> list[float]:
        """The values of a scale answer, from min to max."""
        step = 1 if self.step is None else self.step
        count = int(round((self.max - self.min) / step))
        return [self.min + i * step for i in range(count + 1)]


class TextsTable(Table):
    """``[texts]``: the fixed texts of the participant pages."""

    consent: str = ""
    instructions: str = ""
    pledge: str = ""
    completion: str = ""


class PageTable(Table):
    """``[page]``: what a participant reads for one item (templates over the item's fields)."""

    sentence: str = ""
    question: str = ""
    hints: list[str] = Field(default_factory=list)


class PromptTemplates(Table):
    """The prompt's templates. ``block``: one question (``with_answer`` and ``answer`` set for a
    demonstration); ``text``: the completions prompt (over ``system``, ``demos``, ``question``); ``system`` and
    ``user``: the chat prompt's first and last message; ``answer``: a demonstration's answer as written."""

    system: str | None = None
    block: str | None = None
    text: str | None = None
    user: str | None = None
    answer: str | None = None


class PromptTable(PromptTemplates):
    """``[prompt]``: the standard style's templates, and ``[prompt.styles.NAME]`` for other styles (each key
    unset there falls back to the standard one)."""

    styles: dict[str, PromptTemplates] = Field(default_factory=dict)
    version: str = Field("", description="Prompt version label runs get by default (empty: the kind's).")
    questions: Literal["separate", "together"] = Field(
        "separate", description="With [[questions]]: separate: one prompt per question; together: one prompt "
        "asking every question, answered as a JSON object keyed by the questions' keys.")

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        """``questions`` is left out at its default (a study stored before it existed dumps and hashes the same)."""
        dump = handler(self)
        if dump.get("questions") == "separate":
            dump.pop("questions")
        return dump


class QuestionTable(Table):
    """``[[questions]]``: one of several questions asked about every item (generic studies), each its own
    variable: stored, exported and reported under its ``key``. Replaces ``[answer]`` and ``[page] question``
    (``[page] sentence`` and ``hints`` are shown once, above the questions)."""

    key: str = Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=40, description="The question's name in the data, "
                     "the export and the report (lower case, digits, _), unique in the file.")
    question: str = Field(min_length=1, description="The question (a Jinja2 template over the item's fields, as "
                          "[page] question).")
    required: bool = Field(True, description="A participant must answer it to go on.")
    answer: AnswerTable = Field(description="Its answer shape (any shape), as an [answer] table.")
    prompt: PromptTemplates | None = Field(None, description="This question's prompt templates for models "
                                           "(unset ones: the [prompt] ones).")


class DesignTable(Table):
    """``[design]``: where the items come from: an item file beside the definition, or a named generator."""

    items: str | None = Field(None, description="Item file (CSV or JSONL) relative to the definition file.")
    generator: str | None = Field(None, description="A named design an installed family contributes "
                                  "(manage.py families).")
    options: dict[str, Any] = Field(default_factory=dict)
    key: str = Field("key", description="Generic studies: the item file column that names each item.")
    generated_by: str = Field("", description="Provenance only: the generator an exported study's items came from.")

    @model_validator(mode="after")
    def _one_source(self) -> "DesignTable":
        if self.items and self.generator:
            raise ValueError("give either items (a file) or generator, not both")
        return self


class ParticipantsTable(Table):
    """``[participants]``: how many items each participant answers and how they are drawn."""

    items_per_participant: int | None = Field(None, ge=1)
    items_per_expression: int = Field(2, ge=0)
    controls_per_participant: int = Field(2, ge=0)
    draw_speaker_names: bool = True
    attention_filter: bool | None = None
    attention_threshold: float = 0.2
    idle_timeout_minutes: int | None = Field(None, ge=1)


#: Names a questionnaire field may not take: the combined export's columns and the analysis table's
#: (analysis/exports.py, analysis/dataset.py), which its column sits beside (tests/test_questionnaire.py checks).
RESERVED_FIELD_NAMES = frozenset({
    "study", "item_id", "item_key", "kind", "expression", "is_control", "statement_id", "truth", "context",
    "language", "respondent_type", "respondent_id", "participant_status", "agent", "model", "mode", "run_id",
    "sample_index", "value", "choice", "lower", "upper", "bin", "distribution", "raw_text", "status",
    "time_taken_ms", "included", "timestamp", "channel", "text", "option_order", "study_version", "respondent", "label",
    "participant_id", "dist", "persona", "excluded_by", "question",
})


class QuestionnaireField(Table):
    """``[[questionnaire]]``: one question about the participant (age, gender, first language, …), typed so a
    model persona can carry the same field. Answers are stored per participant under ``name`` (a number as a
    number, a choice as its key, text as text; an optional field left empty as null)."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=40,
                      description="The answer's name in the export and the report (lower case, digits, _).")
    label: str = Field(min_length=1, description="The question as participants read it.")
    type: Literal["choice", "number", "text"] = "choice"
    choices: list[Option] = Field(default_factory=list, description="Choice: the options (radio buttons), in "
                                  "the order shown; plain strings are both key and label.")
    min: float | None = Field(None, description="Number: the smallest value accepted.")
    max: float | None = Field(None, description="Number: the largest value accepted.")
    integer: bool = Field(False, description="Number: whole numbers only (e.g. an age in years).")
    max_length: int = Field(200, ge=1, le=2000, description="Text: the longest answer accepted, in characters.")
    required: bool = True
    when: Literal["before", "after"] = Field("before", description="Asked before the items (after consent) "
                                             "or after the last item (before the completion page).")

    @field_validator("choices", mode="before")
    @classmethod
    def _plain_choices(cls, value: Any) -> Any:
        """Choices may be written as plain strings (key and label the same)."""
        if isinstance(value, list):
            return [{"key": v, "label": v} if isinstance(v, str) else v for v in value]
        return value

    @model_validator(mode="after")
    def _coherent(self) -> "QuestionnaireField":
        if self.name in RESERVED_FIELD_NAMES:
            raise ValueError(f"questionnaire field name {self.name!r} is taken by an export column; choose "
                             f"another (e.g. participant_{self.name})")
        if self.type == "choice" and not self.choices:
            raise ValueError(f"choice field {self.name!r} needs choices")
        if self.type != "choice" and self.choices:
            raise ValueError(f"field {self.name!r}: choices are only for type = \"choice\"")
        if self.type != "number" and (self.min is not None or self.max is not None):
            raise ValueError(f"field {self.name!r}: min and max are only for type = \"number\"")
        if self.min is not None and self.max is not None and self.min >= self.max:
            raise ValueError(f"min ({self.min:g}) must be below max ({self.max:g})")
        if duplicates := repeated(c.key for c in self.choices):
            raise ValueError(f"field {self.name!r}: choice keys repeat: {', '.join(duplicates)}")
        return self


class ProlificTable(Table):
    """``[prolific]``: the completion codes participants are sent back with (empty: generated)."""

    completion_code: str = ""
    failed_attention_code: str = ""
    screened_out_code: str = ""


class ReportTable(Table):
    """``[report]``: the report sections, their named options and the fields answers are grouped by."""

    sections: list[str] = Field(default_factory=list, description="The report's sections (empty: the kind's); the "
                                "generic section is always added.")
    options: dict[str, str] = Field(default_factory=dict)
    group_by: list[str] = Field(default_factory=list, description="Item fields (e.g. condition) whose values make "
                                "the generic section's item groups, and questionnaire fields the humans are broken "
                                "down by.")
    metrics: list[str] = Field(default_factory=list, description="Named metrics (an installed family's, e.g. "
                               "mean-value) computed per agent in the report's metrics section.")

    @field_validator("sections")
    @classmethod
    def _known_sections(cls, sections: list[str]) -> list[str]:
        known = registry.names("sections")
        unknown = [s for s in sections if s not in known]
        if unknown:
            raise ValueError(f"unknown report section(s) {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
        return list(dict.fromkeys(sections))

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, metrics: list[str]) -> list[str]:
        known = registry.names("metrics")
        unknown = [m for m in metrics if m not in known]
        if unknown:
            raise ValueError(f"unknown metric(s) {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
        if duplicates := repeated(metrics):
            raise ValueError(f"metrics names {', '.join(map(repr, duplicates))} more than once")
        return metrics

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:  # no metrics: stored and hashed as before they existed
        return _without_empty(handler(self), ("metrics",))

    @field_validator("group_by")
    @classmethod
    def _distinct(cls, names: list[str]) -> list[str]:
        if duplicates := repeated(names):
            raise ValueError(f"group_by names {', '.join(map(repr, duplicates))} more than once")
        return names


class PersonaTable(Table):
    """``[agents.persona]``: who the model is asked to be. ``template`` (Jinja2 over questionnaire field names)
    is rendered for each persona and placed in the system message or before the first user message's text;
    the personas are ``people`` written here, or drawn ``from = "participants"`` (the study's completed,
    non-test, non-withdrawn participants' questionnaire answers) at the run's start: all of them, or
    ``sample`` of them stratified by the template's fields (elicitation/persona_sample.py), seeded by ``seed``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True, strict=True)

    template: str = Field(min_length=1, description="Jinja2 over questionnaire field names, e.g. \"You are a "
                          "{{ age }}-year-old {{ gender }} native speaker of {{ first_language }}.\"")
    placement: Literal["system", "user"] = Field("system", description="system: in the system message (first in "
                                                 "a completions prompt); user: before the first user message's text.")
    people: list[dict[str, Any]] = Field(default_factory=list, description="Personas written in the file: "
                                         "questionnaire field values, e.g. {age = 30, gender = \"woman\"}.")
    from_: Literal["participants"] | None = Field(None, alias="from", description="\"participants\": drawn from "
                                                 "the study's participants' questionnaire answers at the run's start.")
    sample: int | None = Field(None, ge=1, description="From participants: draw this many (stratified by the "
                               "template's fields); unset: one persona per participant.")
    seed: int | None = Field(None, description="From participants: the draw's seed (unset: the agent's seed, "
                             "else a random one; the run records the seed used).")

    @model_validator(mode="after")
    def _one_source(self) -> "PersonaTable":
        if bool(self.people) == (self.from_ is not None):
            raise ValueError("give either people (a list of personas) or from = \"participants\", not both or neither")
        if self.sample is not None and self.from_ is None:
            raise ValueError("sample is only for personas drawn from participants")
        return self


class AgentTable(Table):
    """``[[agents]]``: a model configuration the study declares, started with ``manage.py elicit SLUG
    --all-agents``. Agents are not part of the study's content (versions.py): adding one needs no new version."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=60, description="The agent's name (lower case, "
                      "digits, - and _), unique in the file; the run carries it.")
    endpoint: str = Field(min_length=1, max_length=100, description="A registered endpoint's name (add_endpoint).")
    mode: Literal["greedy", "sampled", "top_logprobs", "full_distribution", "likelihood"] = "greedy"
    samples: int = Field(1, ge=1, le=1000, description="Answers per item (and per persona).")
    temperature: float | None = Field(None, ge=0, le=5, description="Unset: 1.0 for sampled runs, else 0.")
    prompt_style: str = Field("standard", description="One of the kind's prompt styles or the file's "
                              "[prompt.styles.NAME].")
    max_tokens: int = Field(8, ge=1, le=100_000)
    few_shot: bool = Field(True, description="Show the study's demonstrations (kinds whose prompts show them).")
    seed: int | None = Field(None, description="Sent where the endpoint takes one (+ sample index).")
    persona: PersonaTable | None = None
    cells: list[str] = Field(default_factory=list, description="With [[factors]]: the cells the agent is asked "
                             "under (one run per cell); empty: every cell.")
    checks: bool = Field(False, description="Ask the agent the study's [[checks]] too, once per persona and sample "
                         "(their results in the export's check columns); default: models skip them.")

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        dump = _without_empty(handler(self), ("cells",))
        if not dump.get("checks"):
            dump.pop("checks", None)  # left out at its default: a file from before it dumps the same
        return dump


class Demonstration(Table):
    """``[[demonstrations]]``: a worked example shown on the instructions page and in few-shot prompts; its
    fields are an item's, plus ``answer``."""

    model_config = ConfigDict(extra="allow")
    answer: float | str


class CheckTable(Table):
    """``[[checks]]``: an attention check every participant gets, whatever items are drawn (surveys/checks.py).
    Its wording is its own (the instruction is in the question, as Prolific asks); its answers are stored
    apart from the items' (``CheckAnswer``); models are asked it only by an agent with ``checks = true``."""

    key: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=40, description="The check's name in the "
                     "data and the export (lower case, digits, - and _).")
    type: Literal["instructed", "nonsensical"] = Field(description="instructed: the question tells which answer "
                                                       "to give (\"For this statement, please choose "
                                                       "'Strongly disagree'.\"); nonsensical: a statement no "
                                                       "attentive reader agrees with.")
    sentence: str = Field("", description="Shown above the question, as an item's sentence.")
    question: str = Field(min_length=1, description="The check's question, with its instruction in it.")
    answer: AnswerTable | None = Field(None, description="Its answer shape (scale, choice or pick); unset: the "
                                       "study's [answer].")
    passing: list[float | str] = Field(alias="pass", min_length=1, description="The answers that pass: scale "
                                       "values or option keys.")
    after_item: int | list[int] = Field(description="Where it appears: after this many items (0: before the "
                                        "first), or [low, high] for a random place in that range per "
                                        "participant; beyond the participant's list it comes after the last item.")

    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True)

    @field_validator("after_item")
    @classmethod
    def _place(cls, value: int | list[int]) -> int | list[int]:
        if isinstance(value, list):
            if len(value) != 2 or value[0] < 0 or value[0] > value[1]:
                raise ValueError("after_item as a range is [low, high] with 0 ≤ low ≤ high")
        elif value < 0:
            raise ValueError("after_item must be 0 or more")
        return value


class CheckFailuresTable(Table):
    """``[check_failures]``: what failing the checks does. Prolific: in a study of five minutes or more a
    participant may not be turned away for a single failed check, and one who fails is asked to return the
    submission (never rejected on it)."""

    action: Literal["record", "return", "screen_out"] = Field("record", description="record: nothing happens "
                                                              "(the failure is stored); return: the study ends "
                                                              "with a page asking to return the submission; "
                                                              "screen_out: the study ends with the screened-out "
                                                              "completion code.")
    after: int = Field(2, ge=1, description="How many failed checks trigger the action.")
    minutes: float | None = Field(None, gt=0, description="The study's estimated completion time (as on "
                                  "Prolific); a single failed check may end only a study under five minutes.")

    @model_validator(mode="after")
    def _prolific_policy(self) -> "CheckFailuresTable":
        if self.action != "record" and self.after < 2 and (self.minutes is None or self.minutes >= 5):
            raise ValueError("Prolific's attention-check policy: a participant may not be turned away for a single "
                             "failed check in a study of five minutes or more; set after = 2 or more (or give "
                             "minutes below 5 for a shorter study)")
        return self


class ExclusionTable(Table):
    """``[[exclusions]]``: one rule of the registry (surveys/definition/exclusion_rules.py) with its parameters; the report
    leaves out the completed participants any rule excludes, and says how many each rule excluded."""

    rule: Literal[RULE_NAMES]
    at_least: int | None = None
    total_seconds: float | None = None
    median_item_seconds: float | None = None
    percent: float | None = None
    min_items: int | None = None
    threshold: float | None = None

    @model_validator(mode="after")
    def _params(self) -> "ExclusionTable":
        given = {k: v for k, v in self.model_dump().items() if k != "rule" and v is not None}
        problems = params_problems(self.rule, given)
        if problems:
            raise ValueError("; ".join(f"{key}: {message}" for key, message in problems))
        return self


class Definition(Table):
    """A whole study definition file."""

    format: Literal[1] = FORMAT
    study: StudyTable
    answer: AnswerTable | None = None
    texts: TextsTable = Field(default_factory=TextsTable)
    wording: dict[str, str | list[str]] = Field(
        default_factory=dict, description="Named texts every template sees as wording.NAME (e.g. a task "
        "description shared by the instructions page and the prompt).")
    page: PageTable = Field(default_factory=PageTable)
    prompt: PromptTable = Field(default_factory=PromptTable)
    demonstrations: list[Demonstration] = Field(default_factory=list)
    design: DesignTable = Field(default_factory=DesignTable)
    participants: ParticipantsTable = Field(default_factory=ParticipantsTable)
    questionnaire: list[QuestionnaireField] = Field(default_factory=list)
    prolific: ProlificTable = Field(default_factory=ProlificTable)
    report: ReportTable = Field(default_factory=ReportTable)
    agents: list[AgentTable] = Field(default_factory=list, description="Model configurations the study declares.")
    checks: list[CheckTable] = Field(default_factory=list, description="Attention checks every participant gets.")
    check_failures: CheckFailuresTable = Field(default_factory=CheckFailuresTable)
    exclusions: list[ExclusionTable] = Field(default_factory=list, description="The rules the report excludes "
                                             "participants by (surveys/definition/exclusion_rules.py).")
    factors: list[FactorTable] = Field(default_factory=list, description="Between-subjects factors: each "
                                       "participant is given one cell (a level of every factor).")
    conditions: ConditionsTable | None = Field(None, description="The cells and how participants are assigned "
                                               "(with [[factors]]; unset: every crossing, balanced).")
    blocks: BlocksTable | None = Field(None, description="Items in blocks by an item field, the blocks' order "
                                       "counterbalanced across participants.")
    questions: list[QuestionTable] = Field(default_factory=list, description="Several questions per item "
                                           "(generic studies), each with its own key, answer shape and required "
                                           "flag; replaces [answer] and [page] question.")

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        return _without_empty(handler(self), DESIGN_TABLES + ("questions",))

    @model_validator(mode="after")
    def _coherent(self) -> "Definition":
        _check_questions(self)
        if self.study.kind == "generic" and self.answer is None and not self.questions:
            raise ValueError("a generic study needs an [answer] table (or [[questions]])")
        if duplicates := repeated(f.name for f in self.questionnaire):
            raise ValueError(f"questionnaire field names repeat: {', '.join(duplicates)}")
        if duplicates := repeated(c.key for c in self.checks):
            raise ValueError(f"check keys repeat: {', '.join(duplicates)}")
        if duplicates := repeated(e.rule for e in self.exclusions):
            raise ValueError(f"exclusion rules repeat: {', '.join(duplicates)} (give each rule once)")
        check_design(self.factors, self.conditions, {f.name for f in self.questionnaire})
        if self.factors and self.conditions is None:
            self.conditions = ConditionsTable()
        for number, agent in enumerate(self.agents):
            cells = set(self.conditions.cells or []) if self.conditions else set()
            if agent.cells and not self.factors:
                raise ValueError(f"agents[{number}].cells: the study declares no [[factors]]")
            every = cells or set(_crossing(self.factors))
            if unknown := [c for c in agent.cells if c not in every]:
                raise ValueError(f"agents[{number}].cells: no cell {', '.join(map(repr, unknown))}")
            if agent.checks and not self.checks:
                raise ValueError(f"agents[{number}].checks: the study declares no [[checks]] to ask")
        return self


def _check_questions(definition: Definition) -> None:
    """``[[questions]]`` and the tables it replaces: one form or the other, each problem naming its key."""
    questions = definition.questions
    if not questions:
        if definition.prompt.questions != "separate":
            raise ValueError("prompt.questions: the study declares no [[questions]] (it has one question)")
        return
    if definition.study.kind != "generic":
        raise ValueError(f"questions: a {definition.study.kind} study asks its kind's own question; [[questions]] "
                         "is for a generic study ([study] kind = \"generic\")")
    if definition.answer is not None:
        raise ValueError("answer: give either [answer] (one question per item, worded by [page] question) or "
                         "[[questions]] (each with its own [questions.answer]), not both")
    if definition.page.question:
        raise ValueError("page.question: with [[questions]] each question has its own wording "
                         "(questions[N].question); [page] keeps only sentence and hints")
    if duplicates := repeated(q.key for q in questions):
        raise ValueError(f"questions: keys repeat: {', '.join(duplicates)}")
    if not any(q.required for q in questions):
        raise ValueError("questions: at least one question must be required (a page is answered when its "
                         "required questions are)")
    for number, question in enumerate(questions):
        if question.answer.randomise:
            raise ValueError(f"questions[{number}].answer.randomise: options in an order drawn per participant "
                             "are for a study's single [answer]; list a question's options in the order to show")
    for number, check in enumerate(definition.checks):
        if check.answer is None:
            raise ValueError(f"checks[{number}].answer: with [[questions]] there is no study-wide [answer]; give "
                             "the check its own answer table")


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a definition file (for editors; docs/reference/study-definition.schema.json)."""
    return Definition.model_json_schema()
