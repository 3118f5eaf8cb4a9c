"""Personas of declared agents: the stratified draw (elicitation/persona_sample.py), personas from the file and
from participants (elicitation/personas.py), the preamble's placement (elicitation/persona_prompts.py), and a
run that asks every item once per persona (rows, stored persona, prompt hashes)."""
from __future__ import annotations

import io
from collections import Counter

import pytest
from django.core.management import call_command

from agent_studies import PEOPLE, TEMPLATE, agent, load_example, participant
from elicitation.models import ElicitationRun, ModelResponse
from elicitation.persona_prompts import with_preamble
from elicitation.persona_sample import stratified_sample, strata
from elicitation.personas import PersonaError, personas_for
from elicitation.prompts import prompt_content, prompt_for_run, prompt_hash
from elicitation.runs import create_run, ensure_rows, progress
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys.instruments import Prompt
from surveys.models import Withdrawal
from surveys.respondent_ids import hashed_id


# --- the draw (pure) ---------------------------------------------------------------------------------------
def population(n_women: int, n_men: int, languages: list[str]) -> list[dict]:
    genders = ["woman"] * n_women + ["man"] * n_men
    return [{"gender": g, "first_language": languages[i % len(languages)], "age": 20 + i}
            for i, g in enumerate(genders)]


def test_stratified_sample_keeps_the_marginals():
    people = population(30, 20, ["English", "English", "English", "Spanish"])  # 60 % women; 75 % English
    chosen = stratified_sample(people, 20, ["gender", "first_language"], seed=1)
    assert len(chosen) == len(set(chosen)) == 20
    genders = Counter(people[i]["gender"] for i in chosen)
    languages = Counter(people[i]["first_language"] for i in chosen)
    assert genders == {"woman": 12, "man": 8}
    assert languages == {"English": 15, "Spanish": 5}


def test_stratified_sample_bins_numbers_and_is_reproducible_by_seed():
    people = population(20, 20, ["English"])
    bins = strata(people, "age")
    assert len(set(bins)) == 4 and Counter(bins) == {("bin", k): 10 for k in range(4)}  # quartiles of 20..59
    one = stratified_sample(people, 8, ["age", "gender"], seed=5)
    assert one == stratified_sample(people, 8, ["age", "gender"], seed=5)
    assert Counter(strata(people, "age")[i] for i in one) == {("bin", k): 2 for k in range(4)}
    others = {tuple(stratified_sample(people, 8, ["age", "gender"], seed=s)) for s in range(6, 12)}
    assert len(others) > 1  # the seed decides among equally good draws
    assert sorted(stratified_sample(people, 100, ["gender"], seed=3)) == list(range(40))


# --- the preamble --------------------------------------------------------------------------------------------
BASE = Prompt(text="Task.\n\nStatement: it rains.\nAnswer:",
              messages=[{"role": "system", "content": "Task."}, {"role": "user", "content": "Statement: it rains."}])


def test_preamble_goes_into_the_system_message_or_before_the_user_text():
    system = with_preamble(BASE, "You are 30.", "system")
    assert system.messages == [{"role": "system", "content": "You are 30.\n\nTask."},
                               {"role": "user", "content": "Statement: it rains."}]
    user = with_preamble(BASE, "You are 30.", "user")
    assert user.messages == [{"role": "system", "content": "Task."},
                             {"role": "user", "content": "You are 30.\n\nStatement: it rains."}]
    for prompt in (system, user):  # completions: first in the text
        assert prompt.text == "You are 30.\n\nTask.\n\nStatement: it rains.\nAnswer:"
    assert BASE.messages[0]["content"] == "Task."  # the prompt given is not changed
    bare = Prompt(text="Q", messages=[{"role": "user", "content": "Q"}])
    assert with_preamble(bare, "P", "system").messages == [{"role": "system", "content": "P"},
                                                          {"role": "user", "content": "Q"}]


# --- personas from the file and from participants ----------------------------------------------------------
@pytest.mark.django_db
def test_personas_written_in_the_file():
    study = load_example([agent(persona={"template": TEMPLATE, "people": PEOPLE})]).study
    personas, seed = personas_for(study, study.definition["agents"][0])
    assert [p["fields"] for p in personas] == PEOPLE and seed is None
    assert personas[1]["source"] == "definition:people[1]"


@pytest.mark.django_db
def test_personas_from_participants_leave_out_test_unfinished_and_withdrawn_ones():
    study = load_example([agent(persona={"template": TEMPLATE, "from": "participants"})]).study
    table = study.definition["agents"][0]
    with pytest.raises(PersonaError, match="agent 'mirror'.*no completed"):
        personas_for(study, table)
    participant(study, "P-ONE", age=30, gender="woman", first_language="English")
    participant(study, "P-TEST", is_test=True, age=40, gender="man", first_language="English")
    participant(study, "P-STARTED", status="started", age=50, gender="man", first_language="English")
    participant(study, "P-GONE", age=60, gender="man", first_language="Spanish")
    participant(study, "P-NOAGE", gender="man", first_language="Spanish")  # the template needs the age
    Withdrawal.objects.create(study=study, study_slug=study.slug, respondent_id=hashed_id("P-GONE"),
                              reason="withdrawn", requested_by="test", participant_status="completed")
    personas, seed = personas_for(study, table)
    assert personas == [{"fields": {"age": 30, "gender": "woman", "first_language": "English"},
                         "source": hashed_id("P-ONE")}]
    assert seed is None and "P-ONE" not in str(personas)


@pytest.mark.django_db
def test_a_persona_sample_from_participants_is_stratified_seeded_and_recorded():
    study = load_example([agent(seed=11, persona={"template": TEMPLATE, "from": "participants", "sample": 5})]).study
    for n in range(10):  # 6 women, 4 men; 5 English, 5 Spanish
        participant(study, f"P{n}", age=20 + 5 * n, gender="woman" if n < 6 else "man",
                    first_language="English" if n % 2 else "Spanish")
    table = study.definition["agents"][0]
    personas, seed = personas_for(study, table)
    assert seed == 11  # the agent's seed, as the persona table sets none
    assert len(personas) == 5 and personas == personas_for(study, table)[0]
    genders = Counter(p["fields"]["gender"] for p in personas)
    assert genders == {"woman": 3, "man": 2}
    assert {p["source"] for p in personas} <= {hashed_id(f"P{n}") for n in range(10)}
    reseeded = dict(table, persona=dict(table["persona"], seed=99))
    assert personas_for(study, reseeded)[1] == 99


# --- a run with personas -------------------------------------------------------------------------------------
def run_command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.django_db
@pytest.mark.parametrize("api_style, placement", [("chat", "system"), ("chat", "user"), ("completions", "system")])
def test_a_run_asks_each_item_once_per_persona_and_sample(stub, api_style, placement):
    make_endpoint(stub, api_style=api_style)
    study = load_example([agent(mode="sampled", samples=2, seed=3,
                                persona={"template": TEMPLATE, "people": PEOPLE, "placement": placement})]).study
    stub.default = Reply.answer("40")
    out = run_command("elicit", study.slug, "--all-agents", "--sync", "--no-check")
    run = ElicitationRun.objects.get()
    assert "agent mirror: started run" in out and run.status == "completed"
    assert run.agent == "mirror" and run.agent_settings["persona"]["placement"] == placement
    assert [p["fields"] for p in run.personas] == PEOPLE
    rows = list(ModelResponse.objects.filter(run=run).order_by("item__key", "sample_index"))
    assert len(rows) == 6 * 2 * 2 and progress(run)["total"] == 24
    first_item = [r for r in rows if r.item_id == rows[0].item_id]
    assert [r.sample_index for r in first_item] == [0, 1, 2, 3]
    assert [r.persona for r in first_item] == [PEOPLE[0], PEOPLE[0], PEOPLE[1], PEOPLE[1]]
    assert len(stub.requests) == 24
    sent = [r.body.get("messages") or r.body.get("prompt") for r in stub.requests]
    texts = [str(s) for s in sent]
    assert sum("You are a 30-year-old woman whose first language is English." in t for t in texts) == 12
    assert sum("You are a 64-year-old man whose first language is Spanish." in t for t in texts) == 12
    if api_style == "chat":
        role = "system" if placement == "system" else "user"
        assert all(any(m["role"] == role and m["content"].startswith("You are a ") for m in s) for s in sent)
    else:
        assert all(s.startswith("You are a ") for s in sent)
    # the stored prompt is what was sent, and each persona's hash differs
    hashes = {(r.item_id, r.persona["age"]): r.prompt.sha256 for r in rows}
    assert len(set(hashes.values())) == 6 * 2
    for row in first_item:
        content = prompt_content(prompt_for_run(run, row.item, row.sample_index), api_style)
        assert prompt_hash(content) == row.prompt.sha256


@pytest.mark.django_db
def test_a_run_without_personas_keeps_its_prompts(stub):
    endpoint = make_endpoint(stub)
    study = load_example([]).study
    run = create_run(study, endpoint, samples=1)
    assert ensure_rows(run) == 6 and run.answers_per_item() == 1
    item = study.main_items().order_by("key").first()
    assert prompt_for_run(run, item, 0) == study.kind.prompt_for_sample(item, study.demonstrations(), True,
                                                                         "standard", 0, None)
    assert set(ModelResponse.objects.filter(run=run).values_list("persona", flat=True)) == {None}


# --- people's free text stays theirs (issue 32 point 8) -------------------------------------------------------
COMMENTS = '''
[[questionnaire]]
name = "comments"
label = "Any comments on the study?"
type = "text"
required = false
when = "after"
'''


@pytest.mark.django_db
def test_participants_comments_are_not_copied_onto_model_rows(stub):
    """A persona drawn from participants carried every questionnaire answer, so each participant's comment
    appeared on every model row of the combined export and the replication package. Model rows carry the
    persona's fields only, never people's free text, also for personas stored before the fix."""
    from agent_studies import EXAMPLE, example_text
    from analysis.exports import export_rows, study_layout
    from analysis.replication import rows as package_rows
    from surveys.definition.loader import files_beside, load

    make_endpoint(stub)
    text = example_text([agent(persona={"template": TEMPLATE, "from": "participants"})])
    text = text.replace("[report]", COMMENTS.lstrip() + "\n[report]")
    study = load(text, str(EXAMPLE), files_beside(EXAMPLE)).study
    from tests.test_analysis_factories import add_participant

    for pid, answers in (("P-A", dict(age=30, gender="woman", first_language="English",
                                      comments="Loved it, my cat helped")),
                         ("P-B", dict(age=64, gender="man", first_language="Spanish", comments="Too long"))):
        person = add_participant(study, pid, [(item, 50) for item in study.main_items()])
        person.questionnaire = answers
        person.save(update_fields=["questionnaire"])
    stub.default = Reply.answer("40")
    run_command("elicit", study.slug, "--all-agents", "--sync", "--no-check")
    run = ElicitationRun.objects.get()
    assert sorted(p["fields"]["age"] for p in run.personas) == [30, 64]
    assert all("comments" not in p["fields"] for p in run.personas)
    assert not ModelResponse.objects.filter(persona__has_key="comments").exists()

    def exported() -> tuple[list, list]:
        columns = study_layout(study).columns
        at, kind = columns.index("comments"), columns.index("respondent_type")
        found = list(export_rows(study))
        return ([r[at] for r in found if r[kind] == "human"], [r[at] for r in found if r[kind] == "model"])

    humans, models = exported()
    assert sorted(humans) == sorted(["Loved it, my cat helped"] * 6 + ["Too long"] * 6)  # theirs, on their rows
    assert len(models) == 12 and set(models) == {None}
    # runs stored before the fix carry the comments in their personas: the export and the package leave them out
    for answer in ModelResponse.objects.filter(run=run):
        answer.persona = dict(answer.persona, comments="Too long")
        answer.save(update_fields=["persona"])
    run.personas = [dict(p, fields=dict(p["fields"], comments="Too long")) for p in run.personas]
    run.save(update_fields=["personas"])
    humans, models = exported()
    assert len(models) == 12 and set(models) == {None}
    packaged = str(package_rows.run_rows(study)) + str(package_rows.model_answer_rows(study))
    assert "Too long" not in packaged and "'gender': 'man'" in packaged
