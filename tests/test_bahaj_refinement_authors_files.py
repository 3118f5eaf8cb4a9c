"""Bahaj et al.'s self-refinement files as the authors stored them (issue 33.4): ``selfrefine|…jsonl`` records
carry ``answer`` — the question's TRUE answer — beside ``chosen_answer`` and ``proposed_answer``; the reply is taken
from those two, the records are matched by ``id``, ``hint_type`` and ``confidence_pct``, and under the prompt style
``authors-refine`` reversed and non-numeric intervals are kept and scored as misses, the others dropped."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from analysis.reports import build_report
from elicitation.models import ElicitationRun, ModelResponse
from surveys.importers import import_items
from surveys.models import Study

pytestmark = pytest.mark.django_db

# The authors' questions are rows of a CSV; their records' ``id`` is the row's index.
CSV = ("id,question,answer,source\n0,In what year did humans first land on the Moon?,1969,mmlu\n"
       "1,What is absolute zero in degrees Celsius?,-273.15,mmlu\n")
TRUTH = {"0": 1969, "1": -273.15}
LEVELS = (60, 70, 80, 90, 95)


@pytest.fixture
def study():
    call_command("create_study", "sr", "--instrument", "interval_confidence", stdout=io.StringIO())
    study = Study.objects.get(slug="sr")
    import_items(study, io.StringIO(CSV))
    return study


@pytest.fixture
def source(study, tmp_path):
    """The generation the refinements refine, imported as asked with the authors' vanilla prompt."""
    rows = [{"key": i.key, "answer": f"lower_bound: {i.ground_truth - 1}\nupper_bound: {i.ground_truth + 1}"}
            for i in study.main_items()]
    path = tmp_path / "gen.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    call_command("import_model_answers", "sr", str(path), "--model", "gpt-4o-mini", "--prompt-style",
                 "authors-vanilla", stdout=io.StringIO())
    return ElicitationRun.objects.get(study=study, source_file="gen.jsonl")


def record(qid: str, levels: list[int], chosen, proposed) -> dict:
    """One record as selfrefine|{dataset}|{model}|True|False|{mixed}|{n}.jsonl stores it (protocol §5.5)."""
    return {"id": int(qid), "confidence_pct": levels, "conf_prompt_type": "ci_explain", "hint_type": "hint0",
            "tries": [3, 3, 1][:len(levels)], "data_name": "mmlu", "model_name": "gpt-4o-mini", "ci_exaplain": True,
            "cot": False, "question": CSV.splitlines()[int(qid) + 1].split(",")[1], "answer": TRUTH[qid],
            "chosen_answer": chosen, "chosen_reason": "the narrowest that holds it",
            "proposed_answer": proposed, "proposed_reason": "tighter"}


def single_records() -> list[dict]:
    """Both questions × 5 levels: hits, a reversed and a non-numeric proposal (kept, misses), and two replies
    the authors' scoring drops (a proposed answer that is no list of two)."""
    out = []
    for qid, a in TRUTH.items():
        for c in LEVELS:
            out.append(record(qid, [c] * 3, [a - 1, a + 1], [a - 0.5, a + 0.5]))
    out[1]["proposed_answer"] = [TRUTH["0"] + 2, TRUTH["0"] - 2]   # reversed: a miss
    out[2]["proposed_answer"] = ["around 1969", "1970"]              # a bound that is no number: a miss
    out[3]["proposed_answer"] = "none"                               # no list: dropped
    out[6]["proposed_answer"] = [TRUTH["1"]]                         # one bound: dropped
    return out


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_the_authors_selfrefine_records_import_as_they_score_them(study, source, tmp_path):
    path = write(tmp_path / "selfrefine|mmlu|gpt-4o-mini|True|False|False|3.jsonl", single_records())
    call_command("import_model_answers", "sr", path, "--model", "gpt-4o-mini", "--refines", str(source.pk),
                 stdout=io.StringIO())
    run = ElicitationRun.objects.get(study=study, refines=source)
    assert run.prompt_style == "authors-refine"  # the source was asked the authors' way
    answers = {r.item.key: r for r in ModelResponse.objects.filter(run=run)}
    assert len(answers) == 10
    moon = answers["0|60"]
    assert moon.status == "ok" and (moon.lower, moon.upper) == (1968.5, 1969.5)  # not the true answer 1969
    assert moon.detail["chosen"] == [1968, 1970] and '"chosen_answer": [1968, 1970]' in moon.raw_output
    assert answers["0|70"].detail["proposed"] == [1971, 1967]                 # reversed, kept as it is
    assert answers["0|80"].detail["proposed"] == [None, 1970]                 # "around 1969" is no number
    assert answers["0|90"].status == answers["1|70"].status == "unparseable"  # dropped by the authors

    study.report_options = {"reading": "authors"}
    study.save()
    table = build_report(study).tables()["self_refinement"].set_index(["kind", "source"])
    # kept: 8 of 10 (the reversed and the non-numeric proposals stay, as misses); 2 dropped
    proposed = table.loc[("proposed", "all")]
    assert proposed["n"] + proposed["unparsed"] == 8 and proposed["dropped"] == 2
    assert proposed["unparsed"] == 1  # the bound that is no number, a miss in the denominator
    assert proposed["hit_avg"] == pytest.approx(100 * 6 / 8)  # the reversed one is a miss too
    assert table.loc[("chosen", "all"), "n"] == 8
    assert table.loc[("chosen", "all"), "hit_avg"] == 100


def test_mixed_records_are_the_questions_first_items_and_the_style_can_be_named(study, source, tmp_path):
    rows = [record("0", [95, 60, 70, 60, 80, 90, 60, 95, 70], [1900, 2000], [1960, 1975]),
            record("1", [70, 70, 95, 60, 80, 90, 60, 95, 70], [-300, -200], [-250, -260])]  # reversed: a miss
    path = write(tmp_path / "selfrefine|mmlu|gpt-4o-mini|True|False|True|9.jsonl", rows)
    call_command("import_model_answers", "sr", path, "--model", "gpt-4o-mini", "--refines", str(source.pk),
                 "--refine-setting", "mixed", "--candidates", "9", "--prompt-style", "authors-refine",
                 stdout=io.StringIO())
    run = ElicitationRun.objects.get(study=study, refines=source)
    assert sorted(ModelResponse.objects.filter(run=run).values_list("item__key", flat=True)) == ["0|60", "1|60"]
    study.report_options = {"reading": "authors"}
    study.save()
    table = build_report(study).tables()["self_refinement"].set_index(["kind", "source"])
    assert table.loc[("proposed", "all"), "n"] == 2 and table.loc[("proposed", "all"), "hit_avg"] == 50


def test_a_record_naming_no_item_is_refused_with_its_line_and_column(study, source, tmp_path):
    rows = single_records()
    rows[4]["confidence_pct"] = [65, 65, 65]
    path = write(tmp_path / "selfrefine.jsonl", rows)
    with pytest.raises(CommandError, match=r"line 5.*confidence_pct.*no item at level 65"):
        call_command("import_model_answers", "sr", path, "--model", "gpt-4o-mini", "--refines", str(source.pk),
                     stdout=io.StringIO())
    assert not ElicitationRun.objects.filter(refines=source).exists()
    with pytest.raises(CommandError, match="prompt style 'refine' or 'authors-refine', not 'cot'"):
        call_command("import_model_answers", "sr", write(tmp_path / "r2.jsonl", single_records()), "--model",
                     "gpt-4o-mini", "--refines", str(source.pk), "--prompt-style", "cot", stdout=io.StringIO())


def test_answer_beside_the_reply_keys_is_the_true_answer_not_the_reply(study, source, tmp_path):
    """Matched by a key column: ``answer`` (the true answer, a number) is still not read as the reply."""
    rows = [{"key": f"{r['id']}|{r['confidence_pct'][0]}", **r} for r in single_records()]
    call_command("import_model_answers", "sr", write(tmp_path / "keyed.jsonl", rows), "--model", "gpt-4o-mini",
                 "--refines", str(source.pk), "--key-column", "key", "--prompt-style", "refine", stdout=io.StringIO())
    run = ElicitationRun.objects.get(study=study, refines=source)
    moon = ModelResponse.objects.get(run=run, item__key="0|60")
    assert moon.status == "ok" and (moon.lower, moon.upper) == (1968.5, 1969.5)
    assert moon.detail["chosen"] == [1968, 1970]
