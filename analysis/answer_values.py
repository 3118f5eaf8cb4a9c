"""The values a study's answer columns take, for the codebook (analysis/codebook.py) and the ``question``
column (analysis/export_columns.py): from the study's answer shape, or with ``[[questions]]`` from each question's
(surveys/questions.py). No Django import at module level."""
from __future__ import annotations


def _n(value: float) -> str:
    return f"{float(value):g}"


Entries = dict[str, tuple[str, tuple[tuple[str, str], ...]]]
ANSWER_COLUMNS = ("value", "choice", "lower", "upper", "bin", "text")


def answer_entries(study) -> Entries:
    """Column → (values, labels) of the answer columns, from the study's answer shape; with ``[[questions]]``
    each question's, named by its key (``rating: 1–7 …; estimate: 0–100 …``; labels ``rating: 1``)."""
    from surveys.questions import question_kind, questions_of, several

    if not several(study):
        return shape_entries(study, study.kind)
    parts = [(q.key, shape_entries(study, question_kind(study, q))) for q in questions_of(study)]
    out: Entries = {}
    for name in ANSWER_COLUMNS:
        filled = [(key, entries[name]) for key, entries in parts if not entries[name][0].startswith("empty")]
        if not filled:
            shapes = ", ".join(f"{key}: {shape_name(study, key)}" for key, _ in parts)
            out[name] = (f"empty (this study's questions are {shapes})", ())
            continue
        out[name] = ("; ".join(f"{key}: {text}" for key, (text, _) in filled) + " (by question; empty for the others)"
                     if len(filled) < len(parts) else "; ".join(f"{key}: {text}" for key, (text, _) in filled),
                     tuple((f"{key}: {v}", t) for key, (_, labels) in filled for v, t in labels))
    return out


def shape_name(study, key: str) -> str:
    from surveys.questions import questions_of

    answer = next((q.answer for q in questions_of(study) if q.key == key), None) or {}
    return str(answer.get("shape", "scale")).replace("_", " ")


def question_labels(study) -> tuple[tuple[str, str], ...]:
    """(key, "wording (answer shape)") of each of the study's ``[[questions]]``, in order."""
    from surveys.questions import question_kind, questions_of

    out = []
    for question in questions_of(study):
        entries = shape_entries(study, question_kind(study, question))
        shown = "; ".join(f"{name} {text}" for name, (text, _) in entries.items()
                          if not text.startswith("empty") and name != "bin")
        required = "" if question.required else ", optional"
        out.append((question.key, f"{question.question} ({shape_name(study, question.key)}{required}: {shown})"))
    return tuple(out)


def shape_entries(study, kind) -> Entries:
    """Column → (values, labels) of the answer columns for one answer shape (``kind``'s)."""
    from surveys.instruments.shapes import ChoiceShape, FreeTextShape, IntervalShape, ScaleShape

    shape = kind.shape
    unused = f"empty (this study's answer shape is {shape.name.replace('_', ' ')})"
    out: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
        name: (unused, ()) for name in ("value", "choice", "lower", "upper", "bin", "text")}
    if isinstance(shape, ScaleShape):
        labels = {float(v): str(t) for v, t in (getattr(kind, "scale_labels", None) or {}).items()}
        labelled = tuple((_n(v), t) for v, t in sorted(labels.items()))
        span = f"{_n(kind.scale_min)}–{_n(kind.scale_max)} in steps of {_n(kind.scale_step)}"
        shown = "; labels: " + ", ".join(f"{v} = {t}" for v, t in labelled) if labelled else ""
        out["value"] = (span + shown, labelled)
        bins = sorted({float(kind.score(v)) for v in kind.answer_options()})
        out["bin"] = (" | ".join(_n(b) for b in bins), ())
    elif isinstance(shape, ChoiceShape):
        options: dict[str, str] = {}
        for item in study.main_items():
            for option in kind.options(item):
                options.setdefault(option.key, option.text)
        pairs = tuple(options.items())
        out["choice"] = (" | ".join(f"{k} = {t}" for k, t in pairs) or "the key of an option the item offers", pairs)
    elif isinstance(shape, IntervalShape):
        out["lower"] = ("a number, ≤ upper", ())
        out["upper"] = ("a number, ≥ lower", ())
    elif isinstance(shape, FreeTextShape):
        out["text"] = (f"free text, up to {shape.max_length} characters", ())
    return out
