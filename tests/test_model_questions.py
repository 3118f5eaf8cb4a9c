"""Several questions per item, the model side (issue 31 point 5): a model is asked each question of an item —
one prompt per question (``[prompt] questions = "separate"``, the default) or one prompt for all of them answered
as a JSON object (``"together"``) — each answer parsed by its question's shape and stored on its own row
(``ModelResponse.question``), unique per (run, item, sample, question); a together request is counted once.
Runs against the loopback stub (tests/stub_openai.py)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.db.models import Sum

from elicitation.estimate import estimate_run
from elicitation.models import ElicitationRun, ModelResponse
from elicitation.question_prompts import parse_together
from elicitation.runs import create_run, run_sync, start_run
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys.definition.loader import files_beside, load
from surveys.models import Study
from surveys.question_kinds import prompt_kind

pytestmark = pytest.mark.django_db

EXAMPLE = Path(__file__).resolve().parent.parent / "studies" / "examples" / "hedged-advice" / "study.toml"
CELLS = ["doctor-gain", "doctor-loss", "friend-gain", "friend-loss"]
ANSWER = """[answer]
shape = "scale"
min = 1
max = 7

[answer.labels]
1 = "Not at all sure"
2 = "Hardly sure"
3 = "Somewhat unsure"
4 = "Half sure"
5 = "Fairly sure"
6 = "Very sure"
7 = "Completely sure"
"""
QUESTIONS = """[[questions]]
key = "sure"
question = "How sure does {{ condition.speaker }} sound?"

[questions.answer]
shape = "scale"
min = 1
max = 7
labels = { "1" = "Not at all sure", "7" = "Completely sure" }

[[questions]]
key = "chance"
question = "In how many cases out of 100 would this happen?"

[questions.answer]
shape = "scale"
min = 0
max = 100
"""
SURE, CHANCE = "How sure does", "In how many cases out of 100"


def study_text(together: bool = False, agent: str = "") -> str:
    text = EXAMPLE.read_text(encoding="utf-8")
    for old, new in (('question = "How sure does {{ condition.speaker }} sound?"\n', ""), (ANSWER, QUESTIONS)):
        assert old in text, old
        text = text.replace(old, new)
    if together:
        text = text.replace("[prompt]\n", '[prompt]\nquestions = "together"\n')
    if agent:
        text = text.replace("max_tokens = 8\n", f"max_tokens = 40\n{agent}")
    return text


def load_study(text: str) -> Study:
    study = load(text.encode(), str(EXAMPLE), files_beside(EXAMPLE), commit=True).study
    study.status = Study.Status.LIVE
    study.save(update_fields=["status"])
    return study


def reply_by_question(request) -> Reply:
    """6 to the sure question, 80 to the chance one."""
    text = request.prompt_text
    return Reply.answer("6" if SURE in text else "80" if CHANCE in text else "?")


def test_the_database_refuses_a_second_row_for_the_same_question(stub):
    study = load_study(study_text())
    run = create_run(study, make_endpoint(stub), max_tokens=8)
    start_run(run, queue=False)
    item = study.main_items().order_by("pk").first()
    rows = ModelResponse.objects.filter(run=run, item=item, sample_index=0)
    assert sorted(rows.values_list("question", flat=True)) == ["chance", "sure"]  # one row per question
    with pytest.raises(IntegrityError), transaction.atomic():
        ModelResponse.objects.create(run=run, item=item, sample_index=0, question="sure")
    ModelResponse.objects.create(run=run, item=item, sample_index=0, question="third")  # another question: a row


def test_separate_asks_one_prompt_per_question_and_parses_each_by_its_shape(stub):
    study = load_study(study_text())
    stub.responder = reply_by_question
    run = create_run(study, make_endpoint(stub), max_tokens=8)
    estimate = estimate_run(run)
    start_run(run, queue=False)
    run = run_sync(run)
    assert run.status == ElicitationRun.Status.COMPLETED
    rows = ModelResponse.objects.filter(run=run)
    assert rows.count() == 20 and len(stub.requests) == 20 == estimate.requests and estimate.answers == 20
    assert {(r.question, r.value, r.status) for r in rows} == {("sure", 6, "ok"), ("chance", 80, "ok")}
    sure = rows.filter(question="sure").first()
    prompt = json.dumps(sure.prompt.content)
    assert SURE in prompt and "your doctor" in prompt and CHANCE not in prompt
    assert "from 1 to 7" in prompt and "Completely sure" in prompt  # the question's own answer instruction
    chance = rows.get(item=sure.item, question="chance")
    assert "from 0 to 100" in json.dumps(chance.prompt.content) and chance.prompt_hash != sure.prompt_hash
    assert all(r.requests == 1 and r.prompt_tokens == 100 for r in rows)  # each its own request


def test_a_question_answered_off_its_scale_is_unparseable_on_its_row_only(stub):
    study = load_study(study_text())
    stub.responder = lambda request: Reply.answer("80")  # on the 0-100 scale, not on the 1-7 one
    run = create_run(study, make_endpoint(stub), max_tokens=8, items=list(study.main_items()[:1]))
    start_run(run, queue=False)
    run_sync(run)
    rows = {r.question: r for r in ModelResponse.objects.filter(run=run)}
    assert rows["chance"].status == "ok" and rows["chance"].value == 80
    assert rows["sure"].status == "unparseable" and rows["sure"].value is None and rows["sure"].raw_output == "80"


def test_questions_own_prompt_templates_win_over_the_studys():
    text = study_text().replace('max = 100\n', 'max = 100\n\n[questions.prompt]\nblock = "Q: {{ question }} '
                                '({{ scale_min }}-{{ scale_max }})"\n', 1)
    study = load_study(text)
    item = study.main_items().order_by("pk").first()
    from elicitation.prompts import prompt_for_run

    run = ElicitationRun(study=study, few_shot=False, condition="friend-loss")
    chance = prompt_for_run(run, item, 0, [], "chance")
    assert chance.messages[-1]["content"] == "Q: In how many cases out of 100 would this happen? (0-100)"
    assert chance.messages[0]["content"].startswith("You will read pieces of advice")  # [prompt] system kept
    sure = prompt_for_run(run, item, 0, [], "sure")
    assert "How sure does a friend sound?" in sure.messages[-1]["content"]  # the study's templates, the cell's text


def test_together_asks_once_and_stores_one_row_per_question_counted_once(stub):
    study = load_study(study_text(together=True))
    stub.default = Reply.answer('Here: {"sure": 6, "chance": 85}', prompt_tokens=300, completion_tokens=12)
    run = create_run(study, make_endpoint(stub), max_tokens=40)
    estimate = estimate_run(run)
    start_run(run, queue=False)
    run = run_sync(run)
    assert run.status == ElicitationRun.Status.COMPLETED
    rows = ModelResponse.objects.filter(run=run)
    assert rows.count() == 20 and len(stub.requests) == 10 == estimate.requests and estimate.answers == 20
    asked = stub.requests[0].prompt_text
    assert SURE in asked and CHANCE in asked and "JSON object with the keys sure, chance" in asked
    assert {(r.question, r.value) for r in rows} == {("sure", 6), ("chance", 85)}
    for item_id in set(rows.values_list("item_id", flat=True)):
        pair = {r.question: r for r in rows.filter(item_id=item_id)}
        assert pair["sure"].raw_output == pair["chance"].raw_output and pair["sure"].prompt_id == pair["chance"].prompt_id
        assert pair["chance"].detail["asked_with"] == "sure" and pair["chance"].requests == 0
    totals = rows.aggregate(r=Sum("requests"), p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
    assert totals == {"r": 10, "p": 3000, "c": 120}  # each request counted once, with its reported usage


def test_together_parses_each_value_by_its_question_with_its_own_error(stub):
    study = load_study(study_text(together=True))
    stub.default = Reply.answer('{"sure": 9}')
    run = create_run(study, make_endpoint(stub), max_tokens=40, items=list(study.main_items()[:1]))
    start_run(run, queue=False)
    run_sync(run)
    rows = {r.question: r for r in ModelResponse.objects.filter(run=run)}
    assert {q: r.status for q, r in rows.items()} == {"sure": "unparseable", "chance": "unparseable"}
    assert "no 'chance'" in rows["chance"].parse_error and rows["sure"].parse_error
    assert "chance" not in rows["sure"].parse_error


def test_parse_together_reads_a_fenced_object_and_refuses_prose():
    study = load_study(study_text(together=True))
    kinds = [prompt_kind(study, "sure"), prompt_kind(study, "chance")]
    parsed = parse_together(kinds, 'Sure.\n```json\n{"sure": "5", "chance": 42.0}\n```')
    assert [(p.key, p.parsed.value) for p in parsed] == [("sure", 5), ("chance", 42)]
    nothing = parse_together(kinds, "five and forty")
    assert all(not p.parsed.ok and "no JSON object" in p.parsed.error for p in nothing)


def test_a_study_with_one_question_keeps_its_rows_and_prompts(stub):
    """No [[questions]]: one row per (item, sample) with question "", the prompt of before."""
    study = load_study(EXAMPLE.read_text(encoding="utf-8"))
    stub.default = Reply.answer("5")
    run = create_run(study, make_endpoint(stub), max_tokens=8)
    start_run(run, queue=False)
    run_sync(run)
    assert set(ModelResponse.objects.filter(run=run).values_list("question", flat=True)) == {""}
    assert ModelResponse.objects.filter(run=run).count() == 10 == len(stub.requests)


def test_a_declared_agent_with_personas_answers_both_questions_in_every_cell(stub, tmp_path):
    agent = ('\n[agents.persona]\ntemplate = "You are {{ age }} years old."\npeople = [{ age = 30 }, { age = 70 }]\n')
    text = study_text(together=False, agent=agent).replace(
        "[report]", '[[questionnaire]]\nname = "age"\nlabel = "How old are you?"\ntype = "number"\n\n[report]')
    study = load_study(text)
    make_endpoint(stub)
    stub.responder = reply_by_question
    call_command("elicit", study.slug, "--all-agents", "--sync", "--no-check", stdout=io.StringIO())
    runs = ElicitationRun.objects.filter(study=study)
    assert sorted(runs.values_list("condition", flat=True)) == CELLS
    answers = ModelResponse.objects.filter(run__study=study)
    assert answers.count() == 4 * 2 * 10 * 2 and len(stub.requests) == 160
    assert {(a.condition, a.persona["age"], a.question, a.value) for a in answers} == {
        (c, age, q, v) for c in CELLS for age in (30, 70) for q, v in (("sure", 6), ("chance", 80))}
    assert all(r.body["messages"][0]["content"].startswith("You are ") for r in stub.requests)

    from analysis.exports import export_rows, read_csv, study_layout, write_csv
    from analysis.reports import build_report

    layout = study_layout(study)
    write_csv(export_rows(study, layout=layout), path := tmp_path / "export.csv", layout=layout)
    frame = read_csv(path, layout)
    models = frame[frame["respondent_type"] == "model"]
    assert len(models) == 160 and set(models["question"]) == {"sure", "chance"}
    assert set(zip(models["question"], models["value"], models["condition"])) == {
        (q, v, c) for c in CELLS for q, v in (("sure", 6), ("chance", 80))}
    assert set(models["age"]) == {30, 70}
    cells = build_report(study).tables()["generic_cells"].set_index(["condition", "question", "agent"])
    for cell in CELLS:
        for question, value in (("sure", 6), ("chance", 80)):
            model = cells.loc[(cell, question, "advice-model")]
            assert model["respondents"] == 2 and model["answers"] == 20 and model["mean"] == value


def test_an_answered_rows_question_cannot_be_changed(stub):
    study = load_study(study_text())
    stub.responder = reply_by_question
    run = create_run(study, make_endpoint(stub), max_tokens=8, items=list(study.main_items()[:1]))
    start_run(run, queue=False)
    run_sync(run)
    row = ModelResponse.objects.get(run=run, question="sure")
    with pytest.raises(IntegrityError, match="answered model response cannot be changed"), transaction.atomic():
        ModelResponse.objects.filter(pk=row.pk).update(question="chance2")


# --- attention checks asked of an agent (issue 31 point 3: "unless the agent asks for them") -------------------
CHECKS = """
[[checks]]
key = "imc"
type = "instructed"
question = "To show that you are reading carefully, choose 1 (Not at all sure) for this question."
answer = { shape = "scale", min = 1, max = 7, labels = { "1" = "Not at all sure", "7" = "Completely sure" } }
pass = [1]
after_item = [2, 4]

[[checks]]
key = "swim"
type = "nonsensical"
question = "I swim across the Atlantic Ocean to get to work every day."
answer = { shape = "choice", options = [{ key = "sd", label = "Strongly disagree" }, { key = "d", label = "Disagree" }, { key = "a", label = "Agree" }, { key = "sa", label = "Strongly agree" }] }
pass = ["sd", "d"]
after_item = 8

[report]"""


def checked_text(checks: bool) -> str:
    agent = ('cells = ["doctor-gain"]\n' + ("checks = true\n" if checks else "")
             + '\n[agents.persona]\ntemplate = "You are {{ age }} years old."\npeople = [{ age = 30 }, { age = 70 }]\n')
    return study_text(agent=agent).replace("[report]", '[[questionnaire]]\nname = "age"\nlabel = "How old are you?"'
                                           '\ntype = "number"\n' + CHECKS)


def check_reply(request) -> Reply:
    text = request.prompt_text
    if "Atlantic" in text:  # the persona of 70 agrees with nonsense
        return Reply.answer("sa" if "70 years" in text else "sd")
    if "reading carefully" in text:
        return Reply.answer("1")
    return reply_by_question(request)


def test_models_skip_the_checks_unless_the_agent_asks_for_them(stub):
    study = load_study(checked_text(checks=False))
    make_endpoint(stub)
    stub.responder = check_reply
    call_command("elicit", study.slug, "--all-agents", "--sync", "--no-check", stdout=io.StringIO())
    assert not ModelResponse.objects.filter(run__study=study).exclude(check_key="").exists()
    assert not any("Atlantic" in r.prompt_text or "reading carefully" in r.prompt_text for r in stub.requests)


def test_an_agent_with_checks_true_is_asked_each_check_per_persona(stub, tmp_path):
    study = load_study(checked_text(checks=True))
    make_endpoint(stub)
    stub.responder = check_reply
    run_ids = []
    out = io.StringIO()
    call_command("elicit", study.slug, "--all-agents", "--sync", "--no-check", stdout=out)
    run = ElicitationRun.objects.get(study=study)
    run_ids.append(run.pk)
    assert run.status == ElicitationRun.Status.COMPLETED, run.status_reason
    checks = ModelResponse.objects.filter(run=run).exclude(check_key="")
    assert checks.count() == 2 * 2 and all(c.item_id is None and c.question == "" for c in checks)
    verdicts = {(c.check_key, c.persona["age"]): (c.value, c.choice) for c in checks}
    assert verdicts == {("imc", 30): (1, ""), ("imc", 70): (1, ""), ("swim", 30): (None, "sd"),
                        ("swim", 70): (None, "sa")}
    swim = checks.get(check_key="swim", persona__age=70)
    prompt = json.dumps(swim.prompt.content)
    assert "Atlantic" in prompt and "You are 70 years old." in prompt and "sd. Strongly disagree" in prompt
    assert len(stub.requests) == 2 * 10 * 2 + 4  # the items' questions, then the checks, per persona
    with pytest.raises(IntegrityError), transaction.atomic():  # one answer per check, persona and sample
        ModelResponse.objects.create(run=run, item=None, check_key="imc", sample_index=0)
    with pytest.raises(IntegrityError), transaction.atomic():  # an item's answer or a check's, never both or neither
        ModelResponse.objects.create(run=run, item=None, sample_index=9)

    from analysis.exports import export_rows, read_csv, study_layout, write_csv
    from analysis.reports import build_report

    layout = study_layout(study)
    write_csv(export_rows(study, layout=layout), path := tmp_path / "export.csv", layout=layout)
    frame = read_csv(path, layout)
    models = frame[frame["respondent_type"] == "model"]
    assert len(models) == 40 and models["item_key"].notna().all()  # the checks are no answers to items
    by_age = {age: rows for age, rows in models.groupby("age")}
    assert by_age[30]["check.imc"].all() and by_age[30]["check.swim"].all()
    assert by_age[70]["check.imc"].all() and not by_age[70]["check.swim"].any()
    cells = build_report(study).tables()["generic_cells"].set_index(["condition", "question", "agent"])
    assert cells.loc[("doctor-gain", "sure", "advice-model"), "answers"] == 20  # checks not counted as answers


def test_together_is_for_text_modes_and_a_lone_pending_question_is_read_from_the_json(stub):
    from django.core.exceptions import ValidationError

    study = load_study(study_text(together=True))
    endpoint = make_endpoint(stub)
    with pytest.raises(ValidationError, match="asks its questions together"):
        create_run(study, endpoint, mode="top_logprobs", max_tokens=1)
    stub.default = Reply.answer('{"chance": 85, "sure": 6}')  # its first number is not the sure question's
    run = create_run(study, endpoint, max_tokens=40, items=list(study.main_items()[:1]))
    start_run(run, queue=False)
    ModelResponse.objects.filter(run=run, question="sure").update(status="failed")  # answered before, failed
    ModelResponse.objects.filter(run=run, question="chance").update(status="ok", value=80)
    from elicitation.runs import resume_run

    run.refresh_from_db()
    resume_run(run, queue=False)
    run_sync(run)
    rows = {r.question: r for r in ModelResponse.objects.filter(run=run)}
    assert rows["sure"].value == 6 and rows["sure"].status == "ok" and rows["chance"].value == 80
    assert len(stub.requests) == 1


def test_the_admin_shows_one_questions_answers_at_a_time(stub, admin_client):
    from django.urls import reverse

    study = load_study(study_text())
    stub.responder = reply_by_question
    item = study.main_items().order_by("pk").first()
    run = create_run(study, make_endpoint(stub), max_tokens=8, items=[item])
    start_run(run, queue=False)
    run_sync(run)
    url = reverse("admin:elicitation_item_answers", args=[item.pk])
    first = admin_client.get(url).content.decode()
    assert "1 model answer(s), mean 6" in first and 'href="?question=chance"' in first
    chance = admin_client.get(url + "?question=chance").content.decode()
    assert "1 model answer(s), mean 80" in chance
    assert admin_client.get(url + "?question=nope").status_code == 404
    prompt_url = reverse("admin:elicitation_item_prompt", args=[item.pk])
    assert "from 1 to 7" in admin_client.get(prompt_url).content.decode()
    assert "from 0 to 100" in admin_client.get(prompt_url + "?question=chance").content.decode()
    listed = admin_client.get(reverse("admin:elicitation_modelresponse_changelist")).content.decode()
    assert " · chance" in listed and " · sure" in listed


# --- the worked example: people and a declared agent with personas, two questions in every cell ----------------
WORKED = Path(__file__).resolve().parent.parent / "studies" / "examples" / "advice-estimates" / "study.toml"


def take_both_questions(study: Study, pid: str) -> None:
    """A participant through every step: consent, age 40, instructions, pledge, each item's two questions (6 and 80
    from a doctor, 3 and 40 from a friend), each check passed."""
    from surveys import checks, flow
    from surveys.models import Participant

    participant = flow.enter(study, {"PROLIFIC_PID": pid})
    doctor = participant.condition.startswith("doctor")
    Step = flow.Step
    for _ in range(60):
        participant.refresh_from_db()
        progress = flow.current_step(participant)
        if progress.step in (Step.DONE, Step.ENDED):
            break
        if progress.step == Step.CONSENT:
            flow.record_consent(participant, True)
        elif progress.step == Step.QUESTIONNAIRE_BEFORE:
            assert flow.record_questionnaire(participant, "before", {"q-age": "40"}).is_valid()
        elif progress.step == Step.INSTRUCTIONS:
            flow.record_instructions(participant)
        elif progress.step == Step.PLEDGE:
            flow.record_pledge(participant)
        elif progress.step == Step.CHECK:
            passing = checks.by_key(study)[progress.check.check_key]["pass"][0]
            data = {"choice": passing} if isinstance(passing, str) else {"value": f"{passing:g}"}
            assert checks.submit(participant, progress.check, data).saved
        elif progress.step == Step.ITEM:
            flow.submit_answer(participant, progress.slot.position, progress.slot.item_id,
                               {"sure-value": "6" if doctor else "3", "chance-value": "80" if doctor else "40"})
        else:
            raise AssertionError(f"unexpected step {progress.step}")
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED


def test_people_and_a_persona_agent_answer_both_questions_in_every_cell_side_by_side(stub, tmp_path):
    """issue 31's "done when": a declared agent with personas answers both questions in every cell through the
    loopback stub; the report sets people and the model side by side per cell and question; the export names
    each row's question (models' too) and the agent's checks verdicts."""
    from analysis.exports import export_rows, read_csv, study_layout, write_csv
    from analysis.reports import build_report

    text = WORKED.read_text(encoding="utf-8")
    persona = ('checks = true\n\n[agents.persona]\ntemplate = "You are {{ age }} years old."\n'
               'people = [{ age = 30 }, { age = 70 }]\n')
    assert text.rstrip().endswith("max_tokens = 8")
    text = text.rstrip() + "\n" + persona
    text = text.replace("[report]", '[[questionnaire]]\nname = "age"\nlabel = "How old are you?"\ntype = "number"'
                        '\n\n[report]')
    for rule in ('rule = "too-fast"\nmedian_item_seconds = 2', 'rule = "straight-lining"\npercent = 90'):
        assert rule in text  # these people answer at once, the same each time: the rules would leave them out
        text = text.replace(f"[[exclusions]]\n{rule}\n", "")
    study = load(text.encode(), str(WORKED), files_beside(WORKED), commit=True).study
    study.status = Study.Status.LIVE
    study.save(update_fields=["status"])
    for n in range(8):  # two people per cell (balanced); a doctor sounds surer and likelier than a friend
        take_both_questions(study, f"PID{n:05d}")
    make_endpoint(stub)

    def reply(request) -> Reply:
        asked = request.prompt_text
        if "Atlantic" in asked or "carefully" in asked:
            return Reply.answer("1")
        return Reply.answer("5" if "How sure" in asked else "60")

    stub.responder = reply
    call_command("elicit", study.slug, "--all-agents", "--sync", "--no-check", stdout=io.StringIO())
    answers = ModelResponse.objects.filter(run__study=study, check_key="")
    assert answers.count() == 4 * 2 * 10 * 2
    assert {(a.condition, a.persona["age"], a.question, a.value) for a in answers} == {
        (c, age, q, v) for c in CELLS for age in (30, 70) for q, v in (("sure", 5), ("chance", 60))}

    cells = build_report(study).tables()["generic_cells"].set_index(["question", "condition", "agent"])
    for cell in CELLS:
        doctor = cell.startswith("doctor")
        for question, human, model in (("sure", 6 if doctor else 3, 5), ("chance", 80 if doctor else 40, 60)):
            people = cells.loc[(question, cell, "human")]
            assert people["respondents"] == 2 and people["answers"] == 20 and people["mean"] == human
            agent = cells.loc[(question, cell, "advice-model")]
            assert agent["respondents"] == 2 and agent["answers"] == 20 and agent["mean"] == model

    layout = study_layout(study)
    write_csv(export_rows(study, layout=layout), path := tmp_path / "export.csv", layout=layout)
    frame = read_csv(path, layout)
    assert set(frame.groupby("respondent_type")["question"].agg(lambda s: tuple(sorted(set(s))))) == {
        ("chance", "sure")}
    models = frame[frame["respondent_type"] == "model"]
    assert len(models) == 160 and set(models["condition"]) == set(CELLS)
    check_columns = [c for c in frame.columns if c.startswith("check.")]
    assert check_columns and models[check_columns].notna().all().all()
    people_rows = frame[frame["respondent_type"] == "human"]
    assert people_rows[check_columns].all().all()  # every person passed their checks


def test_importing_model_answers_into_a_study_with_questions_is_refused(tmp_path):
    from analysis.model_answer_import import ModelAnswerFile, import_model_answers
    from surveys.importers import ImportFailed

    study = load_study(study_text())
    path = tmp_path / "answers.csv"
    path.write_text("key,answer\nhealth-1,5\n", encoding="utf-8")
    with pytest.raises(ImportFailed, match="several questions per item"):
        import_model_answers(study, path, ModelAnswerFile(model="m", shape="long", answer="answer"))
    assert not ElicitationRun.objects.filter(study=study).exists()


def test_a_runs_checks_are_queued_by_the_sweep_and_answered_by_a_task(stub, monkeypatch,
                                                                      django_capture_on_commit_callbacks):
    """A run's check rows have no item: they travel in a task's items as None, also when the sweep re-queues them."""
    from elicitation import item_tasks, tasks
    from elicitation.declared_agents import start_agents
    from elicitation.sweep import sweep

    sent: list[tuple[int, list]] = []
    monkeypatch.setattr(tasks.elicit_items, "apply_async", lambda args, **kw: sent.append((args[0], list(args[1]))))
    study = load_study(checked_text(checks=True))
    make_endpoint(stub)
    stub.responder = check_reply
    with django_capture_on_commit_callbacks(execute=True):
        [outcome] = start_agents(study, check=False)
    run = outcome.run
    assert [None] == [i for _, items in sent for i in items if i is None]  # the checks: one task's "item" None
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep(backlog=0, min_age=0) == {run.pk: 11}  # ten items and the checks
    queued = [i for _, items in sent for i in items]
    assert queued[-1] is None and len(queued) == 11
    item_tasks.answer_items(None, run.pk, [None])
    checks = ModelResponse.objects.filter(run=run).exclude(check_key="")
    assert set(checks.values_list("status", flat=True)) == {"ok"} and checks.count() == 4
    assert ModelResponse.objects.filter(run=run, check_key="", status="pending").count() == 40


def _reproduce(path, *args) -> tuple[str, int]:
    from django.core.management.base import CommandError

    out = io.StringIO()
    try:
        call_command("reproduce", str(path), *args, stdout=out)
    except CommandError as exc:
        return out.getvalue() + f"\nERROR {exc}", exc.returncode
    return out.getvalue(), 0


def test_a_package_keeps_each_questions_and_checks_model_answers_and_reruns_together_once_per_item(stub, tmp_path):
    text = checked_text(checks=True).replace("[prompt]\n", '[prompt]\nquestions = "together"\n')
    study = load_study(text)
    make_endpoint(stub)

    def reply(request) -> Reply:
        return check_reply(request) if "Atlantic" in request.prompt_text or "carefully" in request.prompt_text \
            else Reply.answer('{"sure": 6, "chance": 80}')

    stub.responder = reply
    call_command("elicit", study.slug, "--all-agents", "--sync", "--no-check", stdout=io.StringIO())
    assert len(stub.requests) == 10 * 2 + 4  # together: one request per item and persona; then the checks
    out = tmp_path / "package.zip"
    call_command("package", study.slug, "--out", str(out), stdout=io.StringIO())
    printed, code = _reproduce(out)
    assert code == 0 and "no differences" in printed, printed
    from elicitation.models import ModelEndpoint

    ModelEndpoint.objects.create(name="again", base_url=stub.base_url, model="stub-model",
                                 price_prompt_per_1k="0.001", price_completion_per_1k="0.001")
    asked = len(stub.requests)
    printed, code = _reproduce(out, "--rerun-models", "--endpoint", "again", "--yes", "--budget", "1")
    assert code == 0, printed
    assert "40 answers, 40 identical, agreement 1.000" in printed  # each question compared apart
    assert len(stub.requests) - asked == 20  # one request per item and persona, as the run asked


def test_a_package_with_peoples_answers_to_both_questions_reproduces(tmp_path):
    """People's two answers per item page share one slot: the package loads it once (not twice: a UNIQUE failure)."""
    from surveys.models import Response

    text = WORKED.read_text(encoding="utf-8").replace("[report]", '[[questionnaire]]\nname = "age"\nlabel = '
                                                      '"How old are you?"\ntype = "number"\n\n[report]')
    study = load(text.encode(), str(WORKED), files_beside(WORKED), commit=True).study
    study.status = Study.Status.LIVE
    study.save(update_fields=["status"])
    take_both_questions(study, "PID00001")
    assert Response.objects.filter(participant__study=study).count() == 20
    out = tmp_path / "package.zip"
    call_command("package", study.slug, "--out", str(out), stdout=io.StringIO())
    printed, code = _reproduce(out)
    assert code == 0 and "no differences" in printed, printed
