"""Between-subjects factors (``[[factors]]``, ``[conditions]``) and blocks (``[blocks]``) of a study file, issue 31
points 1, 2 and 6: the schema's checks by key path, the cell chosen at entry (balanced, random, from the link,
caps and the full page, in-progress participants counted within the time limit) and kept on resume, the pages
and prompts worded per cell, block orders counterbalanced and stored, and declared agents asked under every
cell. The concurrency test on PostgreSQL is tests/test_conditions_concurrent.py."""
from __future__ import annotations

import io
import random
import tomllib
from datetime import timedelta
from itertools import permutations
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from elicitation.models import ElicitationRun, ModelResponse
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys import blocks, conditions, flow
from surveys.condition_context import under
from surveys.definition.errors import DefinitionError
from surveys.definition.loader import files_beside, load, load_file
from surveys.definition.schema import Definition
from surveys.models import Participant, Study

pytestmark = pytest.mark.django_db

EXAMPLE = Path(__file__).resolve().parent.parent / "studies" / "examples" / "hedged-advice" / "study.toml"
CELLS = ["doctor-gain", "doctor-loss", "friend-gain", "friend-loss"]


def example_text(**replace: str) -> str:
    text = EXAMPLE.read_text(encoding="utf-8")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def load_example(text: str | None = None, *, commit: bool = True) -> Study:
    loaded = load((text or EXAMPLE.read_text(encoding="utf-8")).encode(), str(EXAMPLE), files_beside(EXAMPLE),
                  commit=commit)
    study = loaded.study
    if commit:
        study.status = Study.Status.LIVE
        study.save(update_fields=["status"])
    return study


def enter(study: Study, n: int, **params: str) -> Participant:
    return flow.enter(study, {"PROLIFIC_PID": f"PID{n:05d}", **params})


def problems_of(text: str) -> dict[str, str]:
    with pytest.raises(DefinitionError) as raised:
        load_example(text, commit=False)
    return {p.where: p.message for p in raised.value.problems}


# --- the schema -----------------------------------------------------------------------------------------------
def test_a_study_without_factors_dumps_as_before():
    """No design table, no key: the stored definition and its hash are those of a study from before issue 31."""
    raw = tomllib.loads((EXAMPLE.parent.parent / "hedge-confidence" / "study.toml").read_text(encoding="utf-8"))
    dump = Definition.model_validate(raw).model_dump(mode="json")
    assert not {"factors", "conditions", "blocks"} & set(dump)
    assert all("cells" not in agent for agent in dump["agents"])


def test_the_example_declares_four_cells_and_two_blocks():
    study = load_example()
    assert conditions.cells_of(study.definition) == CELLS
    assert study.definition["conditions"]["assignment"] == "balanced"
    assert blocks.block_names(study) == ["health", "money"]


@pytest.mark.parametrize("old,new,where,message", [
    ('{ key = "loss", text = "loss" },', '{ key = "gain", text = "again" },', "factors[1]", "level keys repeat"),
    ('cap = 50', 'cells = ["doctor-gain", "doctor-lost"]', "", "conditions.cells: 'doctor-lost' is not a crossing"),
    ('cap = 50', 'caps = { "nobody" = 3 }', "", "conditions.caps: no cell 'nobody'"),
    ('name = "framing"', 'name = "speaker"', "", "factor names repeat"),
    ('field = "block"', 'field = "topic"', "blocks.field", "has no 'topic'"),
    ('within = "random"', 'sequence = ["health", "sport"]', "blocks.sequence", "does not name the blocks"),
    ('question = "How sure does {{ condition.speaker }} sound?"', 'question = "How sure does {{ condition.tone }} sound?"',
     "page", "has no attribute 'tone'"),
    ('max_tokens = 8', 'max_tokens = 8\ncells = ["friend-win"]', "", "agents[0].cells: no cell 'friend-win'"),
])
def test_bad_design_tables_are_named(old, new, where, message):
    found = problems_of(example_text(**{old: new}))
    assert any(w.startswith(where) and message in m for w, m in found.items()), found


def test_templates_cannot_name_condition_without_factors():
    path = EXAMPLE.parent.parent / "chance-slider" / "study.toml"
    text = path.read_text(encoding="utf-8").replace('[page]\nsentence = "', '[page]\nsentence = "{{ condition.speaker }}')
    assert "{{ condition.speaker }}" in text
    with pytest.raises(DefinitionError) as raised:
        load(text.encode(), str(path), files_beside(path), commit=False)
    assert any("'condition'" in p.message for p in raised.value.problems)


# --- assignment -----------------------------------------------------------------------------------------------
def test_balanced_assignment_fills_the_cells_evenly_and_a_participant_keeps_their_cell():
    study = load_example()
    people = [enter(study, n) for n in range(12)]
    counts = {cell: sum(p.condition == cell for p in people) for cell in CELLS}
    assert counts == {cell: 3 for cell in CELLS}
    again = enter(study, 5)  # the same PID comes back: the same row, the same cell
    assert again.pk == people[5].pk and again.condition == people[5].condition


def test_balance_counts_completed_and_in_progress_participants_but_not_those_who_left_or_ran_out_of_time():
    study = load_example()
    first = [enter(study, n) for n in range(4)]  # one per cell
    gone = next(p for p in first if p.condition == "doctor-gain")
    Participant.objects.filter(pk=gone.pk).update(status=Participant.Status.RETURNED)
    stale = next(p for p in first if p.condition == "friend-loss")
    Participant.objects.filter(pk=stale.pk).update(started_at=timezone.now() - timedelta(minutes=61))
    nxt = [enter(study, n).condition for n in (10, 11)]
    assert sorted(nxt) == ["doctor-gain", "friend-loss"]  # the two cells whose places were given back
    assert conditions.fill(study) == {cell: 1 for cell in CELLS}


def test_test_participants_are_not_counted_and_may_name_their_cell():
    study = load_example()
    from surveys.test_mode import TEST_PARAM, pilot_token

    tester = flow.enter(study, {"PROLIFIC_PID": "TEST01", TEST_PARAM: pilot_token(study), "condition": "friend-loss"})
    assert tester.is_test and tester.condition == "friend-loss"
    assert conditions.fill(study) == {cell: 0 for cell in CELLS}


def test_caps_skip_a_full_cell_and_refuse_entry_when_all_are_full():
    study = load_example(example_text(**{"cap = 50": 'cap = 2\ncaps = { "doctor-gain" = 1 }'}))
    people = [enter(study, n) for n in range(7)]
    assert sorted(p.condition for p in people) == sorted(["doctor-gain"] + [c for c in CELLS[1:] for _ in (1, 2)])
    with pytest.raises(conditions.StudyFull) as refused:
        enter(study, 99)
    assert "full" in refused.value.title
    assert not Participant.objects.filter(prolific_pid="PID00099").exists()  # nothing is created
    Participant.objects.filter(pk=people[0].pk).update(status=Participant.Status.TIMED_OUT)  # a place comes back
    assert enter(study, 99).condition == people[0].condition


def test_the_link_assigns_its_cell_and_a_link_without_one_is_refused():
    study = load_example(example_text(**{'assignment = "balanced"': 'assignment = "link"'}))
    assert enter(study, 1, condition="friend-gain").condition == "friend-gain"
    assert enter(study, 2, condition="friend-gain").condition == "friend-gain"  # the link decides, not balance
    for bad in ({}, {"condition": "friend-win"}):
        with pytest.raises(conditions.BadCondition):
            enter(study, 3, **bad)
    assert not Participant.objects.filter(prolific_pid="PID00003").exists()


def test_random_assignment_uses_every_cell():
    study = load_example(example_text(**{'assignment = "balanced"': 'assignment = "random"'}))
    seen = {enter(study, n).condition for n in range(40)}
    assert seen == set(CELLS)  # (1 − (3/4)^40 · 4 ≈ 4e-5 chance of missing one)


def test_the_full_page_is_shown_to_a_new_participant(client):
    study = load_example(example_text(**{"cap = 50": "cap = 1"}))
    for n in range(4):
        enter(study, n)
    response = client.get(f"/s/{study.slug}/", {"PROLIFIC_PID": "PIDFULL01"})
    assert response.status_code == 403 and "This study is full" in response.content.decode()


# --- wording per cell -----------------------------------------------------------------------------------------
def test_pages_and_prompts_are_worded_by_the_cell():
    study = load_example()
    item = study.main_items().get(key="health-1")
    kind = study.kind
    with under("friend-loss"):
        page = kind.page_context(item)
        prompt = kind.build_prompt(item, [], True).text
    assert page["sentence"] == "A friend tells you: “Probably the swelling will still be there after a week.”"
    assert page["question"] == "How sure does a friend sound?"
    assert "A friend tells you" in prompt and "still be there" in prompt
    with under("doctor-gain"):
        assert kind.page_context(item)["sentence"] == ("Your doctor tells you: “Probably the swelling will go down "
                                                      "within a week.”")


def test_a_participant_reads_their_cells_wording(client):
    study = load_example()
    people = {}
    for n in range(4):
        participant = enter(study, n)
        people[participant.condition] = participant
    participant = people["friend-loss"]
    for step in ("consent", "instructions", "pledge"):
        getattr(flow, {"consent": "record_consent", "instructions": "record_instructions",
                       "pledge": "record_pledge"}[step])(*((participant, True) if step == "consent" else (participant,)))
    from surveys.views import _session_key

    session = client.session
    session[_session_key(study)] = participant.pk
    session.save()
    page = client.get(f"/s/{study.slug}/question/").content.decode()
    assert "A friend tells you" in page and "How sure does a friend sound?" in page


# --- blocks ---------------------------------------------------------------------------------------------------
def test_block_orders_are_counterbalanced_within_each_cell_and_items_stay_in_their_block():
    study = load_example()
    orders = []
    for n in range(8):
        participant = enter(study, n)
        flow.record_consent(participant, True)
        flow.record_instructions(participant)
        slots = flow.record_pledge(participant, random.Random(n))
        participant.refresh_from_db()
        keys = [s.item.key.split("-")[0] for s in sorted(slots, key=lambda s: s.position)]
        assert keys == [participant.block_order[0]] * 5 + [participant.block_order[1]] * 5
        orders.append((participant.condition, tuple(participant.block_order)))
    for cell in CELLS:  # two participants per cell, one in each order
        assert sorted(o for c, o in orders if c == cell) == [("health", "money"), ("money", "health")]


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_counterbalanced_orders_are_all_permutations_or_a_balanced_latin_square(n):
    names = [f"b{i}" for i in range(n)]
    orders = blocks.orders(names)
    if n <= 4:
        assert sorted(map(tuple, orders)) == sorted(permutations(names))
        return
    assert len(orders) == (n if n % 2 == 0 else 2 * n)
    for position in range(n):  # each block equally often in each position
        column = [order[position] for order in orders]
        assert all(column.count(b) == len(orders) // n for b in names)
    follows = {}
    for order in orders:  # each block follows every other equally often (carry-over balance)
        for a, b in zip(order, order[1:]):
            follows[(a, b)] = follows.get((a, b), 0) + 1
    assert len(follows) == n * (n - 1) and len(set(follows.values())) == 1


def test_fixed_within_block_order_keeps_the_item_files_order():
    study = load_example(example_text(**{'within = "random"': 'within = "fixed"', 'order = "counterbalanced"':
                                         'order = "fixed"\nsequence = ["money", "health"]'}))
    participant = enter(study, 1)
    flow.record_consent(participant, True)
    flow.record_instructions(participant)
    slots = sorted(flow.record_pledge(participant), key=lambda s: s.position)
    assert [s.item.key for s in slots] == [f"money-{i}" for i in range(1, 6)] + [f"health-{i}" for i in range(1, 6)]
    participant.refresh_from_db()
    assert participant.block_order == ["money", "health"]


# --- models under conditions ----------------------------------------------------------------------------------
def test_a_declared_agent_is_asked_under_every_cell(stub):
    study = load_example()
    make_endpoint(stub)
    stub.default = Reply.answer("5")
    out = io.StringIO()
    call_command("elicit", study.slug, "--all-agents", "--sync", "--no-check", stdout=out)
    runs = {r.condition: r for r in ElicitationRun.objects.filter(study=study)}
    assert sorted(runs) == CELLS and all(r.status == "completed" for r in runs.values())
    for cell, run in runs.items():
        answers = ModelResponse.objects.filter(run=run)
        assert answers.count() == 10 and set(answers.values_list("condition", flat=True)) == {cell}
    assert "agent advice-model under friend-loss: started run" in out.getvalue()
    asked = [r.prompt_text for r in stub.requests]
    assert sum("A friend tells you" in text and "swelling will still be there" in text for text in asked) == 1  # friend-loss
    assert sum("Your doctor tells you" in text for text in asked) == 20
    hashes = {cell: set(ModelResponse.objects.filter(run=run).values_list("prompt_hash", flat=True))
              for cell, run in runs.items()}
    assert all(len(h) == 10 for h in hashes.values()) and len(set().union(*hashes.values())) == 40
    out = io.StringIO()
    call_command("elicit", study.slug, "--all-agents", "--sync", "--no-check", stdout=out)
    assert out.getvalue().count("skipped, done") == 4  # each cell's run is done


def test_an_agent_may_name_its_cells_and_personas_are_asked_in_each(stub):
    text = example_text(**{"max_tokens = 8": 'max_tokens = 8\ncells = ["doctor-gain", "friend-loss"]\n\n'
                           '[agents.persona]\ntemplate = "You are {{ age }} years old."\n'
                           'people = [{ age = 30 }, { age = 70 }]',
                           "[report]": '[[questionnaire]]\nname = "age"\nlabel = "How old are you?"\ntype = "number"'
                           '\n\n[report]'})
    study = load_example(text)
    make_endpoint(stub)
    stub.default = Reply.answer("4")
    call_command("elicit", study.slug, "--all-agents", "--sync", "--no-check", stdout=io.StringIO())
    runs = ElicitationRun.objects.filter(study=study)
    assert sorted(runs.values_list("condition", flat=True)) == ["doctor-gain", "friend-loss"]
    answers = ModelResponse.objects.filter(run__study=study)
    assert answers.count() == 2 * 2 * 10
    assert {(a.condition, a.persona["age"]) for a in answers} == {
        (c, age) for c in ("doctor-gain", "friend-loss") for age in (30, 70)}


def test_a_run_started_by_hand_asks_under_the_first_cell_and_says_so(stub):
    from elicitation.runs import create_run

    study = load_example()
    run = create_run(study, make_endpoint(stub))
    assert run.condition == "doctor-gain"
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError):
        create_run(study, run.endpoint, condition="nobody")


# --- report and export ----------------------------------------------------------------------------------------
def take(participant: Participant, value) -> None:
    """Consent, instructions, pledge, then every item answered with ``value(slot)`` (completes them)."""
    flow.record_consent(participant, True)
    flow.record_instructions(participant)
    flow.record_pledge(participant)
    for slot in participant.assignments.order_by("position"):
        flow.submit_answer(participant, slot.position, slot.item_id, str(value(participant, slot)))
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED


def test_the_report_and_the_export_set_people_and_models_side_by_side_cell_by_cell(stub, tmp_path):
    from analysis.exports import read_csv, study_layout, write_csv, export_rows
    from analysis.reports import build_report

    study = load_example()
    people = [enter(study, n) for n in range(8)]
    for participant in people:  # a doctor sounds surer (6) than a friend (3)
        take(participant, lambda p, slot: 6 if p.condition.startswith("doctor") else 3)
    enter(study, 99)  # entered, never finished: counted as entered, not as a respondent
    make_endpoint(stub)
    stub.default = Reply.answer("5")
    call_command("elicit", study.slug, "--all-agents", "--sync", "--no-check", stdout=io.StringIO())

    report = build_report(study)
    tables = report.tables()
    cells = tables["generic_cells"].set_index(["condition", "agent"])
    for cell in CELLS:
        human = cells.loc[(cell, "human")]
        assert human["respondents"] == 2 and human["answers"] == 20
        assert human["mean"] == (6 if cell.startswith("doctor") else 3)
        model = cells.loc[(cell, "advice-model")]
        assert model["respondents"] == 1 and model["answers"] == 10 and model["mean"] == 5
    assert sum(cells.xs("human", level="agent")["participants_entered"]) == 9
    assert list(cells.loc[("friend-loss", "human"), ["speaker", "framing"]]) == ["friend", "loss"]
    summary = tables["generic_summary"]
    assert list(summary.columns[:2]) == ["condition", "expression"]  # every table cell by cell first
    assert set(summary["condition"]) == set(CELLS) and set(summary["agent"]) == {"human", "advice-model"}
    used = [u for u in report.sections["generic"].runs if u.used]
    assert sorted(u.condition for u in used) == CELLS  # one run per agent and cell, all of them used
    assert report.sections["generic"].meta()["people_per_cell"]["doctor-gain"]["completed"] == 2

    layout = study_layout(study)
    assert layout.columns[-4:] == ["condition", "condition_speaker", "condition_framing", "block_order"]
    path = tmp_path / "export.csv"
    write_csv(export_rows(study), path, layout=layout)
    frame = read_csv(path, layout)
    humans = frame[frame["respondent_type"] == "human"]
    by_person = humans.groupby("respondent_id")[["condition", "condition_speaker", "block_order"]].first()
    assert len(by_person) == 8 and set(by_person["condition"]) == set(CELLS)
    assert set(by_person["block_order"]) == {"health|money", "money|health"}
    assert all(row.condition.startswith(row.condition_speaker) for row in by_person.itertuples())
    models = frame[frame["respondent_type"] == "model"]
    assert models.groupby("condition").size().to_dict() == {cell: 10 for cell in CELLS}
    assert models["block_order"].isna().all()


def test_a_study_without_factors_exports_no_design_columns():
    from analysis.exports import study_layout

    path = EXAMPLE.parent.parent / "word-choice" / "study.toml"
    study = load_file(path).study
    columns = study_layout(study).columns
    assert "condition" not in columns and "block_order" not in columns
    assert not [c for c in columns if c.startswith("condition_")]


def test_elicit_by_hand_under_a_named_cell(stub):
    study = load_example()
    make_endpoint(stub)
    stub.default = Reply.answer("3")
    call_command("elicit", study.slug, "--endpoint", "stub", "--condition", "friend-gain", "--sync", "--no-check",
                 stdout=io.StringIO())
    run = ElicitationRun.objects.get(study=study)
    assert run.condition == "friend-gain"
    assert all("A friend tells you" in r.prompt_text for r in stub.requests) and len(stub.requests) == 10
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no cell 'friend-win'"):
        call_command("elicit", study.slug, "--endpoint", "stub", "--condition", "friend-win", "--no-check",
                     stdout=io.StringIO())


def test_check_study_names_the_cells_and_the_blocks():
    out = io.StringIO()
    call_command("check_study", str(EXAMPLE), stdout=out)
    shown = out.getvalue()
    assert ("cells (balanced): doctor-gain, doctor-loss, friend-gain, friend-loss; the pages and prompts below are in "
            "cell doctor-gain") in shown
    assert "blocks by 'block' (counterbalanced, items random within): health, money" in shown
    assert "Your doctor tells you" in shown and not Study.objects.exists()


def test_the_design_is_content_but_caps_are_not():
    """Factors, cells and blocks are part of the version's hash; a cap or the time limit is not (raising a cap
    after answers needs no new version)."""
    from surveys.definition import versions

    def sha(text: str) -> str:
        return load(text.encode(), str(EXAMPLE), files_beside(EXAMPLE), commit=False,
                    inspect=lambda study: versions.current_version(study).sha256).inspected

    first = sha(EXAMPLE.read_text(encoding="utf-8"))
    for old, new in {"cap = 50": "cap = 80", "in_progress_minutes = 60": "in_progress_minutes = 30"}.items():
        assert sha(example_text(**{old: new})) == first
    for old, new in {'text = "a friend"': 'text = "a neighbour"', 'within = "random"': 'within = "fixed"',
                     'assignment = "balanced"': 'assignment = "random"'}.items():
        assert sha(example_text(**{old: new})) != first


def test_the_codebook_names_the_design_columns():
    from analysis.codebook import codebook

    study = load_example()
    entries = {c.name: c for c in codebook(study)}
    assert entries["condition"].source == "design"
    assert entries["condition"].values == "doctor-gain | doctor-loss | friend-gain | friend-loss"
    assert entries["condition_speaker"].labels == (("doctor", "your doctor"), ("friend", "a friend"))
    assert "order the person saw them" in entries["block_order"].meaning
