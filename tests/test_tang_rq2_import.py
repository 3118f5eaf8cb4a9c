"""Tang et al.'s RQ2 answer files as published (one Python dict per line), imported and matched to the items;
one run per agent (a second is refused, never dropped); delete_run; model names kept as given."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from analysis.agents import agent_name
from analysis.model_answer_import import ModelAnswerFile, import_model_answers
from analysis.reports import build_report
from elicitation.models import ElicitationRun, ModelResponse
from surveys.importers import ImportFailed
from test_tang_rq2_report import rq2_study

pytestmark = pytest.mark.django_db

# Lines written as the authors' files write them (single quotes, a tuple, escaped newlines).
STANDARD = [
    "{'id': 0, 'mean_std': (100, 10), 'ci': 0.05, 'interval': 'below 99', 'index': 0, 'answer': 'B.is likely to be'}",
    "{'id': 1, 'mean_std': (100, 10), 'ci': 0.05, 'interval': 'below 99', 'index': 1, 'answer': 'A.is likely to be'}",
    "{'id': 13, 'mean_std': (100, 10), 'ci': 0.05, 'interval': 'between 99 and 100', 'index': 1, "
    "'answer': 'A.is likely to be\\nB.is maybe\\nC.is unlikely to be'}",
    "{'id': 342, 'mean_std': (100, 40), 'ci': 0.95, 'interval': 'below 21 or above 178', 'index': 5, "
    "'answer': 'C.is unlikely to be'}",
]
COT = [
    "{'id': 6, 'mean_std': (100, 10), 'ci': 0.05, 'interval': 'above 99', 'index': 0, 'answer': \"That's 8 out "
    "of 20 specimens, or 40%.\\n\\nI choose: C.\"}",
    "{'id': 12, 'mean_std': (100, 10), 'ci': 0.05, 'interval': 'between 99 and 100', 'index': 4, 'answer': "
    "'the probability is 1/20 = 0.05 or 5%.\\n\\nI choose: E. is almost certainly not.'}",
]


@pytest.fixture
def study():
    return rq2_study("rq2p", "--numbers", "paper")


def write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_authors_files_are_matched_to_the_items(study, tmp_path):
    summary = import_model_answers(study, write(tmp_path / "rq2_result.txt", STANDARD),
                                   ModelAnswerFile(model="gpt-4-0613", shape="tang-rq2"))
    got = {r.item.key: (r.raw_output, r.choice, r.status) for r in ModelResponse.objects.filter(run=summary.run)}
    assert got == {
        "height|5|narrow|0.050|below_low": ("B.is likely to be", "B", "ok"),
        "height|3|narrow|0.050|below_low": ("A.is likely to be", "A", "ok"),
        "height|3|narrow|0.050|between": ("A.is likely to be\nB.is maybe\nC.is unlikely to be", "", "unparseable"),
        "sound|3|wide|0.950|outside": ("C.is unlikely to be", "C", "ok"),
    }
    assert summary.mapping_note == ""  # the study has the authors' numbers
    cot = import_model_answers(study, write(tmp_path / "rq2_cot_result.txt", COT),
                               ModelAnswerFile(model="gpt-4-0613", shape="tang-rq2", prompt_style="cot"))
    got = dict(ModelResponse.objects.filter(run=cot.run).values_list("item__key", "choice"))
    assert got == {"height|5|narrow|0.050|above_low": "C", "sound|5|narrow|0.050|between": "E"}
    assert {agent_name(r) for r in ElicitationRun.objects.all()} == {"gpt-4-0613 (greedy)", "gpt-4-0613 (greedy, cot)"}
    # the authors' reading (the study was generated with the paper's numbers) reads the listing as its first option
    report = build_report(study)
    assert report.meta()["reading"] == "authors"
    rule = ("standard answers read by the first option letter they write (a list of the options, or a letter with "
            "another option's phrase) where the text reading differs")
    assert report.meta()["reading_rules"][rule] == 1


@pytest.mark.parametrize("line, message", [
    ("{'id': 0, 'mean_std': (100, 10), 'ci': 0.05, 'interval': 'below 98', 'index': 0, 'answer': 'B'}",
     "line 2, column '-': no item of the study has height, 5 choices, N(100, 10), confidence 0.05 and interval 'below 98'"),
    ("{'id': 0, 'mean_std': (100, 10), 'ci': 0.05, 'interval': 'below 99', 'index': 6, 'answer': 'B'}",
     "index 6 is not a scenario × choice set number 0–5"),
    ("{'id': 0, 'mean_std': (100, 20), 'ci': 0.05, 'interval': 'below 99', 'index': 0, 'answer': 'B'}",
     "N(100, 20)"),
    ("{'id': 0, 'ci': 0.05, 'interval': 'below 99', 'index': 0, 'answer': 'B'}", "the dict lacks mean_std"),
    ("{'id': 0, 'answer': __import__('os').getcwd()}", "not a Python dict literal"),
    ("['a list']", "a line must hold one dict"),
])
def test_bad_lines_are_refused_naming_the_line(study, tmp_path, line, message):
    with pytest.raises(ImportFailed, match=message.replace("(", r"\(").replace(")", r"\)")):
        import_model_answers(study, write(tmp_path / "bad.txt", [STANDARD[0], line]),
                             ModelAnswerFile(model="m", shape="tang-rq2"))
    assert not ElicitationRun.objects.exists()


def test_a_second_run_of_one_agent_is_refused_and_delete_run_makes_room(study, tmp_path, capsys):
    first = import_model_answers(study, write(tmp_path / "cnc.txt", STANDARD[:2]),
                                 ModelAnswerFile(model="gpt-3.5-turbo", shape="tang-rq2"))
    assert agent_name(first.run) == "gpt-3.5-turbo (greedy)"  # the name as given, dots kept
    other = write(tmp_path / "enc.txt", STANDARD[1:])  # answers an item the first file answers
    with pytest.raises(CommandError, match=f"already has run {first.run.pk} .* for agent 'gpt-3.5-turbo \\(greedy\\)'"):
        call_command("import_model_answers", "rq2p", str(other), "--model", "gpt-3.5-turbo", "--shape", "tang-rq2")
    assert ElicitationRun.objects.count() == 1
    # under another name it is another agent
    call_command("import_model_answers", "rq2p", str(other), "--model", "gpt-3.5-turbo-ENC", "--shape", "tang-rq2")
    assert ElicitationRun.objects.count() == 2
    # delete_run removes the first run and its answers; then the name is free again
    call_command("delete_run", str(first.run.pk))
    assert "deleted run" in capsys.readouterr().out
    assert not ElicitationRun.objects.filter(pk=first.run.pk).exists()
    assert not ModelResponse.objects.filter(run_id=first.run.pk).exists()
    import_model_answers(study, write(tmp_path / "cnc2.txt", STANDARD[:1]),
                         ModelAnswerFile(model="gpt-3.5-turbo", shape="tang-rq2"))


def test_delete_run_refuses_a_run_with_live_work(study, tmp_path):
    run = import_model_answers(study, write(tmp_path / "a.txt", STANDARD[:1]),
                               ModelAnswerFile(model="m", shape="tang-rq2")).run
    ElicitationRun.objects.filter(pk=run.pk).update(status=ElicitationRun.Status.RUNNING)
    with pytest.raises(CommandError, match="is running: cancel it first"):
        call_command("delete_run", str(run.pk))
    ElicitationRun.objects.filter(pk=run.pk).update(status=ElicitationRun.Status.CANCELLED)
    run.responses.update(lease_owner="worker-1", lease_until=timezone.now() + timezone.timedelta(minutes=5))
    with pytest.raises(CommandError, match="a worker still holds 1"):
        call_command("delete_run", str(run.pk))
    assert ModelResponse.objects.filter(run=run).count() == 1
    with pytest.raises(CommandError, match="no run 99999"):
        call_command("delete_run", "99999")
