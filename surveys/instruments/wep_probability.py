"""WEP probability (Fagen-Ulmschneider 2015; Tang et al. RQ1): the probability a word of estimative
probability conveys.

Minimal form: the expression alone — "How probable is an event described as 'likely'?" — answered
with a number from 0 (impossible) to 100 (certain). The participant page offers 0–100 in steps of 5
(21 buttons, the bins of the analysis); answers imported from the Fagen-Ulmschneider survey and model
answers may be any number from 0 to 100. Tang's context sentences (CNC/ENC/FCNC/MCNC, English and Chinese) come later: an item's
``statement`` may already hold a context template with ``{}`` where the WEP goes, and then the question
quotes that sentence. The participant page and the model prompt are both built from the functions below.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from .base import AnswerError, Demonstrations, ImportRowError, Instrument, Prompt, Speaker, plain_number

if TYPE_CHECKING:  # pragma: no cover
    from surveys.models import Item

# The 17 WEPs of the Fagen-Ulmschneider survey, in the survey's column order.
EXPRESSIONS: tuple[str, ...] = (
    "almost certain",
    "highly likely",
    "very good chance",
    "probable",
    "likely",
    "we believe",
    "probably",
    "better than even",
    "about even",
    "we doubt",
    "improbable",
    "unlikely",
    "probably not",
    "little chance",
    "almost no chance",
    "highly unlikely",
    "chances are slight",
)

# Highest to lowest median answer of the survey (Sileo & Moens, App. A, Table 2); ties keep that table's order.
CANONICAL_ORDER: tuple[str, ...] = (
    "almost certain",
    "highly likely",
    "very good chance",
    "we believe",
    "likely",
    "probably",
    "probable",
    "better than even",
    "about even",
    "probably not",
    "we doubt",
    "unlikely",
    "little chance",
    "chances are slight",
    "improbable",
    "highly unlikely",
    "almost no chance",
)

# Kent's anchors (Sileo & Moens, Table 2, †) as the two worked examples.
DEMONSTRATIONS: tuple[dict[str, Any], ...] = (
    {"expression": "certain", "demo_answer": 100},
    {"expression": "impossible", "demo_answer": 0},
)

TASK_INTRO = (
    "People use words such as \"likely\" or \"we doubt\" to say how probable something is. "
    "For each word or phrase you are shown, say how probable an event described with it is, "
    "as a percentage from 0 to 100, where:"
)
SCALE_ENDS = (
    "0 means the event is impossible.",
    "100 means the event is certain.",
)
EXAMPLES_INTRO = "Two worked examples follow. After them, answer the new question."
ANSWER_INSTRUCTION = "Answer with a single number from 0 to 100."
ANSWER_CUE = "Answer:"

# Chinese wording (items with language "zh"): the question is the paper's ("根据陈述“{}”,您认为{}的概率是多少?",
# Methods, RQ1), about the item's proposition (``extra["proposition"]``, the context without its WEP); the
# answer instruction follows the paper's Chinese instruction (no intermediate steps, do not repeat the
# question) on this instrument's 0–100 scale, so answers are parsed and binned like the English ones.
ZH_TASK_INTRO = (
    "人们会用“很可能”“我们怀疑”这样的词语来表达某件事发生的可能性有多大。"
    "对于你看到的每个词语或句子,请给出它所描述的事件发生的概率,用0到100之间的百分数表示,其中:"
)
ZH_SCALE_ENDS = (
    "0表示该事件不可能发生。",
    "100表示该事件一定会发生。",
)
ZH_EXAMPLES_INTRO = "下面是两个示例。看完示例后,请回答新的问题。"
ZH_QUESTION = "请给出一个0(不可能)到100(一定会发生)之间的概率。"
ZH_ANSWER_INSTRUCTION = "你的输出只有一个0到100之间的数字。回答问题时直接给出最终答案,不要加入中间思考过程,不要重复问题。"
ZH_ANSWER_CUE = "答案:"
# Chinese renderings of the WEPs for items without a context sentence (Kent's anchors included); the
# context sentences of surveys/designs/tang_rq1_contexts.toml use the same renderings.
ZH_EXPRESSIONS: dict[str, str] = {
    "almost certain": "几乎肯定", "highly likely": "极有可能", "very good chance": "有很大机会",
    "probable": "大有可能", "likely": "很可能", "we believe": "我们相信", "probably": "大概",
    "better than even": "可能性超过一半", "about even": "可能性大约是一半", "we doubt": "我们怀疑",
    "improbable": "可能性不大", "unlikely": "不太可能", "probably not": "大概不会", "little chance": "机会很小",
    "almost no chance": "几乎没有机会", "highly unlikely": "极不可能", "chances are slight": "可能性很小",
    "certain": "肯定", "impossible": "不可能",
}


def is_chinese(item: "Item") -> bool:
    """Whether the item is worded in Chinese (language "zh", "zh-hans", "zh_Hans", …)."""
    return (getattr(item, "language", "") or "").lower().startswith("zh")


class WepProbability(Instrument):
    name = "wep_probability"
    label = "WEP probability (Fagen-Ulmschneider 2015; Tang et al. RQ1)"
    template_name = "surveys/items/wep_probability.html"
    import_columns = ("expression",)
    optional_columns = ("statement", "statement_id", "context", "language")
    template_rows = (
        {"expression": "likely", "statement": "", "statement_id": "", "context": "", "language": ""},
        {"expression": "probable", "statement": "", "statement_id": "", "context": "", "language": ""},
    )
    scale_min = 0
    scale_max = 100
    scale_step = 5  # the page's buttons; validate() also accepts any whole number 0–100
    expressions = EXPRESSIONS
    task_intro = TASK_INTRO
    # Tang et al. and the Fagen-Ulmschneider survey keep every respondent: Belem's attention filter is off by
    # default (a study can still turn it on).
    attention_filter_default = False
    report_sections = ("belem", "tang_rq1")
    prompt_version_prefix = "wep"
    # Kent's anchors are added to an imported study; a generated Tang RQ1 study is asked without examples
    demonstrations = Demonstrations(fields=("demo_order", "expression", "statement", "language", "demo_answer"))
    scale_ends = SCALE_ENDS

    # --- wording -------------------------------------------------------------------
    def context_sentence(self, item: "Item") -> str:
        """The item's context sentence with its WEP filled in, or "" for the expression alone."""
        template = (item.statement or "").strip()
        if not template:
            return ""
        wep = self.written_expression(item)
        return template.replace("{}", wep) if "{}" in template else template

    def written_expression(self, item: "Item") -> str:
        """The WEP as the item's language writes it (the English expression, or its Chinese rendering)."""
        if is_chinese(item):
            return ZH_EXPRESSIONS.get(item.expression, item.expression)
        return item.expression

    def sentence(self, item: "Item", speaker: Speaker | None = None) -> str:
        context = self.context_sentence(item)
        if is_chinese(item):
            if context:
                proposition = (getattr(item, "extra", None) or {}).get("proposition") or "这件事发生"
                return f"根据陈述“{context}”,你认为{proposition}的概率是多少?"
            return f"一个被描述为“{self.written_expression(item)}”的事件发生的概率是多少?"
        if context:
            return f'Given the statement "{context}", how probable is it?'
        return f"How probable is an event described as '{item.expression}'?"

    def question(self, item: "Item", speaker: Speaker | None = None) -> str:
        if is_chinese(item):
            return ZH_QUESTION
        return "Give a probability from 0 (impossible) to 100 (certain)."

    def hints(self, item: "Item", speaker: Speaker | None = None) -> list[str]:
        return list(ZH_SCALE_ENDS if is_chinese(item) else SCALE_ENDS)

    def intro(self, language: str = "en") -> dict:
        """The task description of the instructions page, in ``language`` ("en", or "zh…" for Chinese)."""
        if language.lower().startswith("zh"):
            return {"task": ZH_TASK_INTRO, "scale_ends": list(ZH_SCALE_ENDS)}
        return super().intro()

    def prompt_block(self, item: "Item", with_answer: bool) -> str:
        answer = f" {item.demo_answer:g}" if with_answer else ""
        if is_chinese(item):
            return f"问题:{self.sentence(item)}\n{ZH_ANSWER_INSTRUCTION}\n{ZH_ANSWER_CUE}{answer}"
        return f"Question: {self.sentence(item)}\n{ANSWER_INSTRUCTION}\n{ANSWER_CUE}{answer}"

    def build_prompt(self, item: "Item", demonstrations: list["Item"], few_shot: bool = True,
                     style: str = "standard") -> Prompt:
        """The prompt in the item's language (the demonstrations are worded in their own language; a
        Chinese study's demonstrations are Chinese items)."""
        demos = list(demonstrations) if few_shot else []
        zh = is_chinese(item)
        scale = "\n".join(f"- {line}" for line in (ZH_SCALE_ENDS if zh else SCALE_ENDS))
        header = f"{ZH_TASK_INTRO if zh else TASK_INTRO}\n{scale}"
        if demos:
            header += f"\n\n{ZH_EXAMPLES_INTRO if zh else EXAMPLES_INTRO}"
        question = self.prompt_block(item, with_answer=False)
        parts = [header, *(self.prompt_block(demo, with_answer=True) for demo in demos), question]
        return Prompt(text="\n\n".join(parts), messages=self.chat_messages(header, demos, question),
                      shots=len(demos))

    # --- answers -------------------------------------------------------------------
    def validate(self, raw: str) -> float:
        value = plain_number(raw)  # digits as the number field sends them; not 1e2, ٥٠, 1_0
        if value is None or not self.scale_min <= value <= self.scale_max:
            raise AnswerError("Please enter a number from 0 to 100.")
        if value != round(value):
            raise AnswerError("Please enter a whole number from 0 to 100.")
        return value

    def default_demonstrations(self, items: list["Item"]) -> list[dict[str, Any]]:
        """Kent's anchors: "certain" → 100 and "impossible" → 0."""
        return [dict(d) for d in DEMONSTRATIONS]

    def canonical_order(self) -> list[str]:
        return list(CANONICAL_ORDER)

    # --- import --------------------------------------------------------------------
    def item_fields_from_row(self, row: Mapping[str, str]) -> dict[str, Any]:
        """Columns: expression (required; one of the 17 WEPs), optional context, language and statement
        (a context template with ``{}`` where the WEP goes)."""
        expression = " ".join((row.get("expression") or "").split()).lower()
        if not expression:
            raise ImportRowError("expression", "is empty")
        if expression not in EXPRESSIONS:
            raise ImportRowError("expression", f"{expression!r} is not one of the 17 WEPs ({', '.join(EXPRESSIONS)})")
        statement = (row.get("statement") or "").strip()
        return {
            "expression": expression,
            "statement": statement,
            "statement_id": (row.get("statement_id") or "").strip(),
            "context": (row.get("context") or "").strip(),
            "language": (row.get("language") or "").strip() or "en",
        }

    def item_key(self, fields: Mapping[str, Any]) -> str:
        """The expression alone, or context|language|statement id|expression for context items."""
        if not (fields.get("context") or fields.get("statement_id") or fields.get("statement")):
            return fields["expression"]
        return "|".join([fields.get("context") or "-", fields.get("language") or "en",
                         fields.get("statement_id") or "-", fields["expression"]])

    def items_for_expressions(self) -> list[dict[str, Any]]:
        """Item fields for the minimal study: one item per WEP, the expression alone."""
        return [{"expression": e, "language": "en"} for e in EXPRESSIONS]
