"""Self-refinement answers made elsewhere imported as a refinement of an imported run (import_model_answers
--refines): they appear in the self-refinement table, not in Table 4; bad settings are refused, nothing written."""
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

CSV = ("id,question,answer,source\nmoon,In what year did humans first land on the Moon?,1969,history\n"
       "zero,What is absolute zero in degrees Celsius?,-273.15,science\n")


@pytest.fixture
def study():
    call_command("create_study", "op", "--instrument", "interval_confidence", stdout=io.StringIO())
    study = Study.objects.get(slug="op")
    import_items(study, io.StringIO(CSV))
    return study


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@pytest.fixture
def source(study, tmp_path):
    """The model's published answers: every item, one try, [a − 1, a + 1] (all hits)."""
    rows = [{"key": item.key, "answer": f"lower_bound: {item.ground_truth - 1}\nupper_bound: {item.ground_truth + 1}"}
            for item in study.main_items()]
    call_command("import_model_answers", "op", write(tmp_path / "gen.jsonl", rows), "--model", "gpt-4o-mini",
                 stdout=io.StringIO())
    return ElicitationRun.objects.get(study=study, source_file="gen.jsonl")


def test_refinements_imported_as_the_authors_store_them(study, source, tmp_path):
    """The authors' selfrefine files keep the reply's keys, not its text: chosen hits, proposed misses."""
    rows = [{"key": item.key, "chosen_answer": [item.ground_truth - 1, item.ground_truth + 1],
             "chosen_reason": "closest", "proposed_answer": [item.ground_truth + 5, item.ground_truth + 6],
             "proposed_reason": "shifted"} for item in study.main_items()]
    rows[0]["proposed_answer"] = "none"  # unreadable: dropped under the authors' reading
    out = io.StringIO()
    call_command("import_model_answers", "op", write(tmp_path / "selfrefine.jsonl", rows), "--model", "gpt-4o-mini",
                 "--refines", str(source.pk), "--candidates", "4", stdout=out)
    run = ElicitationRun.objects.get(study=study, source_file="selfrefine.jsonl")
    assert (run.refines_id, run.refine_setting, run.refine_shown, run.prompt_style) == (source.pk, "single", 4, "refine")
    answer = ModelResponse.objects.filter(run=run).exclude(status="unparseable").first()
    assert answer.detail["chosen"] == [answer.item.ground_truth - 1, answer.item.ground_truth + 1]
    assert answer.upper == answer.item.ground_truth + 6 and '"chosen_answer": [' in answer.raw_output
    assert ModelResponse.objects.filter(run=run, status="unparseable").count() == 1

    tables = build_report(study).tables()
    assert set(tables["overprecision"]["agent"]) == {"gpt-4o-mini (greedy)"}  # not in Table 4
    refined = tables["self_refinement"].set_index(["kind", "source"])
    assert refined["agent"].str.contains(f"refining run {source.pk} \\(single, e=4, imported from selfrefine.jsonl\\)").all()
    assert refined.loc[("chosen", "all"), "hit_avg"] == 100 and refined.loc[("proposed", "all"), "hit_avg"] == 0
    assert refined.loc[("chosen", "all"), "n"] == 10 and refined.loc[("proposed", "all"), "unparsed"] == 1

    study.report_options = {"reading": "authors"}
    study.save()
    refined = build_report(study).tables()["self_refinement"].set_index(["kind", "source"])
    assert refined.loc[("chosen", "all"), "n"] == 9 and refined.loc[("chosen", "all"), "dropped"] == 1


def test_refinement_replies_as_text_and_a_second_refinement_of_the_same_model(study, source, tmp_path):
    rows = [{"key": item.key, "answer": '{"chosen_answer": [0, 3000], "proposed_answer": [1960, 1970]}'}
            for item in study.main_items()]
    for n, setting in ((1, "single"), (2, "mixed")):
        call_command("import_model_answers", "op", write(tmp_path / f"r{n}.jsonl", rows[n - 1:]), "--model",
                     "gpt-4o-mini", "--refines", str(source.pk), "--refine-setting", setting, stdout=io.StringIO())
    table = build_report(study).tables()["self_refinement"]
    assert set(table["setting"]) == {"single", "mixed"} and set(table["candidates"]) == {3}


def test_bad_refinement_imports_are_refused_and_write_nothing(study, source, tmp_path):
    path = write(tmp_path / "r.jsonl", [{"key": study.main_items().first().key, "answer": "{}"}])
    before = ElicitationRun.objects.count()
    for args, message in ((["--refines", "999999"], "no such run"),
                          (["--refines", str(source.pk), "--prompt-style", "cot"], "prompt style 'refine'"),
                          (["--refines", str(source.pk), "--candidates", "0"], "at least one candidate"),
                          (["--prompt-style", "refine"], "--refines RUN")):
        with pytest.raises(CommandError, match=message):
            call_command("import_model_answers", "op", path, "--model", "gpt-4o-mini", *args, stdout=io.StringIO())
    assert ElicitationRun.objects.count() == before
