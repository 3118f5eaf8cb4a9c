"""Each example definition under studies/examples/ used end to end, as a researcher would (issue 20, point 4):
``check_study`` prints its page and prompt and writes nothing, ``load_study`` loads it, people take it in a real
Chromium (the questionnaire where it has one, the real widgets: scale buttons, a slider moved with the keyboard,
options shown in the order drawn for each person, a text area), a model answers it against the loopback stub
(``elicit --sync``; several questions per item: each asked, checks passed among the item pages), then ``report``
and ``export`` give the generic section grouped by the file's ``group_by``
(humans beside the model, a figure per group) and one row per answer with the questionnaire's columns.

One Chromium and one stub serve the whole file."""
from __future__ import annotations

import io
import json
import re
import time
import tomllib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connections

from analysis.export_columns import ITEM_PREFIX, SINGLE_QUESTION
from analysis.exports import COLUMNS, read_csv, study_layout
from elicitation.models import ElicitationRun, ModelResponse
from stub_openai import RecordedRequest, Reply, StubOpenAI, make_endpoint
from surveys.models import Assignment, Item, Participant, Study, StudyVersion
from surveys.respondent_ids import hashed_id
from test_browser import CHROMIUM, CHROMIUM_ARGS, PROLIFIC, offline_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXAMPLES = Path(__file__).resolve().parent.parent / "studies" / "examples"
MODEL = "stub-model"
AGENT = "stub (greedy)"  # the agent is named by its endpoint


# --- how each example is answered ------------------------------------------------------------------------
Answer = Callable[[object, Item, int], object]  # (page, item, person) → the answer given (and checked)


def click_scale(page, item: Item, person: int) -> int:
    """1–7 buttons: a doctor sounds surer than a friend; each person a little different."""
    value = min(7, max(1, (6 if item.extra["condition"] == "doctor" else 3) + person - 1))
    page.click(f"label[for=answer-{value}]")
    return value


def click_advice(page, item: Item, person: int) -> int:
    """hedged-advice's 1–7 buttons: advice from your doctor sounds surer (6) than from a friend (3)."""
    value = 6 if "Your doctor tells you" in page.inner_text("main") else 3
    page.click(f"label[for=answer-{value}]")
    return value


CHANCE = {"likely": 70, "unlikely": 20, "almost certain": 90, "possible": 40}


def move_slider(page, item: Item, person: int) -> int:
    """0–100 slider moved with the keyboard: Home to 0, then to the chance (slide_to)."""
    return slide_to(page, CHANCE[item.expression] + 5 * person)


MIRROR = {"probably": 70, "almost certainly": 90, "possibly": 40, "unlikely": 20, "doubtful": 15, "about even": 50}


def slide_mirror(page, item: Item, person: int) -> int:
    """persona-mirror's 0–100 slider: each expression's chance, each person a little different."""
    return slide_to(page, MIRROR[item.expression] + person)


def slide_to(page, value: int) -> int:
    """Home, then Page Up (a tenth of the range: 10 on 0–100) and the right arrow (one step) to the value."""
    slider = page.locator("input[type=range]")
    slider.focus()
    page.keyboard.press("Home")
    for _ in range(value // 10):
        page.keyboard.press("PageUp")
    for _ in range(value % 10):
        page.keyboard.press("ArrowRight")
    assert page.locator("[data-slider-output]").inner_text() == str(value)
    return value


WORD = {"90": "likely", "50": "tossup", "20": "unlikely", "0": "impossible"}


def choose_option(page, item: Item, person: int) -> str:
    """The options in the order drawn for this person (stored on the slot), clicked by their label."""
    position = int(page.locator("input[name=position]").get_attribute("value"))
    slot = Assignment.objects.get(participant__prolific_pid=pid(person), position=position)
    labels = {o["key"]: o["label"] for o in item.study.definition["answer"]["options"]}
    assert page.locator(".choice-option label").all_inner_texts() == [labels[k] for k in slot.option_order]
    key = "tossup" if person == 2 and item.extra["chance"] == "20" else WORD[item.extra["chance"]]
    page.get_by_text(labels[key], exact=True).click()
    return key


# advice-estimates: how sure (1–7) by the word, a doctor above a friend (means 6 and 3, never the same answer on
# 90 % of the items: straight-lining), and in how many cases out of 100 (a friend 20 lower, each person 1 higher)
SURE = {"almost certainly": 7, "probably": 6, "good chance": 6, "possibly": 6, "unlikely": 5}
CASES = {"almost certainly": 90, "probably": 70, "good chance": 65, "possibly": 40, "unlikely": 20}


def answer_both(page, item: Item | None, person: int) -> dict[str, int] | None:
    """advice-estimates' item page: both questions (the 1–7 buttons, the 0–100 slider), then a pause so that the
    page has been open over the too-fast rule's 2 seconds (2.1 s since it was shown, answering included);
    a check page (``item`` None): passed."""
    shown = time.monotonic()  # the server showed the page before this: its time on the page is longer
    if item is None:
        if page.get_by_text("I swim across the Atlantic Ocean").count():
            page.get_by_text("Strongly disagree").click()
        else:
            assert page.get_by_text("To show that you are reading carefully").is_visible()
            page.click("label[for=answer-1]")
        return None
    friend = "Your doctor tells you" not in page.inner_text("main")
    sure = SURE[item.expression] - 3 * friend
    page.click(f"label[for=q-sure-{sure}]")
    cases = slide_to(page, CASES[item.expression] - 20 * friend + person)
    page.wait_for_timeout(max(0.0, 2100 - 1000 * (time.monotonic() - shown)))
    return {"sure": sure, "chance": cases}


def write_comment(page, item: Item, person: int) -> str:
    text = f"Person {person}: ‘{item.expression}’ makes it sound {'unsure' if person == 1 else 'fairly sure'}."
    page.get_by_label("In your own words").fill(text)
    return text


def scale_reply(request: RecordedRequest) -> Reply:
    last = request.prompt_text.rsplit("says:", 1)[-1]  # the item asked, after the demonstrations
    return Reply.answer("6" if "doctor" in last else "4")


@dataclass
class Example:
    answer: Answer
    column: str  # the export's answer column
    offered: str  # what check_study says a participant may answer
    reply: Callable[[RecordedRequest], Reply]
    questionnaires: list[dict] = field(default_factory=list)  # per person: label → value typed or clicked
    stored: list[dict] = field(default_factory=list)  # per person: the questionnaire as stored
    figures: set[str] = field(default_factory=set)  # figure files the report must write (without extension)
    grouped_by: list[str] = field(default_factory=list)  # item fields of the summary table


EXAMPLE = {
    "hedge-confidence": Example(
        click_scale, "value", "1 (Not sure at all) | 2 | 3 | 4 (Half sure) | 5 | 6 | 7 (Completely sure)", scale_reply,
        questionnaires=[
            {"How old are you?": "34", "woman": "click", "yes": "click", "postgraduate degree": "click"},
            {"How old are you?": "52", "man": "click", "no": "click"},
            {"How old are you?": "27", "woman": "click", "no": "click", "school": "click"}],
        stored=[{"age": 34, "gender": "woman", "first_language": "yes", "education": "postgraduate degree"},
                {"age": 52, "gender": "man", "first_language": "no", "education": None},  # optional, not answered
                {"age": 27, "gender": "woman", "first_language": "no", "education": "school"}],
        figures={"generic-condition-doctor-expression-probably", "generic-condition-friend-expression-doubtful",
                 "generic-by-gender"},
        grouped_by=["condition", "expression"]),
    "word-choice": Example(
        choose_option, "choice", "certain: It is certain | likely: It is likely | tossup: It is a toss-up",
        lambda request: Reply.answer("likely"),
        figures={"generic-chance-0", "generic-chance-90"}, grouped_by=["chance"]),
    "chance-slider": Example(
        move_slider, "value",
        "a slider from 0 to 100 in steps of 1, marked 0 (No chance), 50 (Even chance), 100 (Certain)",
        lambda request: Reply.answer("65"),
        questionnaires=[{"What is your first language?": "Norwegian"}, {"What is your first language?": "Welsh"}],
        stored=[{"first_language": "Norwegian"}, {"first_language": "Welsh"}],
        figures={"generic-expression-likely", "generic-expression-almost-certain"}, grouped_by=["expression"]),
    "persona-mirror": Example(
        slide_mirror, "value",
        "a slider from 0 to 100 in steps of 1, marked 0 (Certainly not), 50 (As likely as not), 100 (Certainly)",
        lambda request: Reply.answer("60"),
        questionnaires=[{"How old are you?": "34", "Woman": "click", "English": "click"},
                        {"How old are you?": "61", "Man": "click", "Spanish": "click"},
                        {"How old are you?": "25", "Non-binary": "click", "English": "click"},
                        {"How old are you?": "45", "Woman": "click", "Mandarin Chinese": "click"},
                        {"How old are you?": "29", "Man": "click", "English": "click"},
                        {"How old are you?": "52", "Woman": "click", "another language": "click"}],
        stored=[{"age": 34, "gender": "woman", "first_language": "English"},
                {"age": 61, "gender": "man", "first_language": "Spanish"},
                {"age": 25, "gender": "non-binary person", "first_language": "English"},
                {"age": 45, "gender": "woman", "first_language": "Mandarin Chinese"},
                {"age": 29, "gender": "man", "first_language": "English"},
                {"age": 52, "gender": "woman", "first_language": "another language"}],
        figures={"generic-expression-probably", "generic-by-gender"}, grouped_by=["expression"]),
    "hedged-advice": Example(  # 2 × 2 between subjects, four people: one per cell (balanced)
        click_advice, "value", "1 (Not at all sure) | 2 (Hardly sure) | 3 (Somewhat unsure) | 4 (Half sure) | "
        "5 (Fairly sure) | 6 (Very sure) | 7 (Completely sure)", lambda request: Reply.answer("5"),
        questionnaires=[{}, {}, {}, {}],  # no questionnaire: four people
        figures={"generic-condition-doctor-gain-expression-probably"}, grouped_by=["condition", "expression"]),
    "advice-estimates": Example(  # the same 2 × 2, two questions per item, checks among the items: one per cell
        answer_both, "value", "1 (Not at all sure) | 2 (Hardly sure) | 3 (Somewhat unsure) | 4 (Half sure) | "
        "5 (Fairly sure) | 6 (Very sure) | 7 (Completely sure)\n[chance] In how many cases out of 100 would this come "
        "true?\n  answers: a slider from 0 to 100 in steps of 1, marked 0 (never), 50 (half of them), "
        "100 (all of them)",
        lambda request: Reply.answer("5" if "from 1 to 7" in request.prompt_text else "60"),
        questionnaires=[{}, {}, {}, {}],
        figures={"generic-condition-doctor-gain-expression-probably-sure",
                 "generic-condition-friend-loss-expression-unlikely-chance"}, grouped_by=["condition", "expression"]),
    "open-comments": Example(
        write_comment, "text", "free text, up to 500 characters",
        lambda request: Reply.answer(" It sounds unsure, because ‘doubt’ says the speaker expects the opposite.\n")),
}
PEOPLE = 2


def pid(person: int) -> str:
    return f"5f1a2b3c4d5e6f7a8b9c0d{person:02d}"


# --- one Chromium and one stub for the file ----------------------------------------------------------------
@pytest.fixture(scope="module")
def chromium():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM} (make browser)")
    from playwright.sync_api import sync_playwright

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs a loop in this thread
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield browser
            browser.close()


@pytest.fixture
def browser(chromium, monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    yield chromium
    connections.close_all()  # the connection made while Playwright's loop ran (PostgreSQL drops the DB after)


@pytest.fixture(scope="module")
def shared_stub():
    with StubOpenAI() as server:
        yield server


@pytest.fixture
def stub(shared_stub):
    shared_stub.reset()
    yield shared_stub
    shared_stub.reset()


# --- a person takes the study ---------------------------------------------------------------------------
def fill_questionnaire(page, answers: dict[str, str], button: str) -> None:
    page.get_by_role("heading", name="About you").wait_for()
    for label, value in answers.items():
        if value == "click":  # a choice: its label is the radio button's target
            page.get_by_label(label, exact=True).check()
        else:
            page.get_by_label(label).fill(value)
    page.get_by_role("button", name=button).click()


def take_study(browser, live_server, study: Study, example: Example, person: int) -> dict[str, object]:
    """``person`` takes ``study`` through its link; returns item key → the answer given."""
    hits: list[str] = []
    page = offline_page(browser, live_server, hits, viewport={"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={pid(person)}&STUDY_ID=st1&SESSION_ID=se{person}")
    page.get_by_role("button", name="I agree, continue").click()
    when = {f.get("when", "before") for f in study.definition.get("questionnaire") or []}
    if "before" in when:
        fill_questionnaire(page, example.questionnaires[person - 1], "Continue")
    page.get_by_role("button", name=re.compile("I have read the instructions")).click()
    page.get_by_label(re.compile("I pledge to answer")).check()
    page.get_by_role("button", name="Start the questions").click()
    given: dict[str, object] = {}
    total = study.items_per_participant + len(study.definition.get("checks") or [])  # each check once, among them
    for number in range(1, total + 1):
        page.get_by_text(f"Question {number} of {total}").wait_for()
        page.wait_for_selector("form[data-answer-form][data-ready]", state="attached")  # flow.js is running
        if not page.locator("input[name=item]").count():  # a check's page: answered, no item's answer
            example.answer(page, None, person)
        else:
            item = Item.objects.get(pk=int(page.locator("input[name=item]").get_attribute("value")))
            given[item.key] = example.answer(page, item, person)
        page.click("button:has-text('Next')")
    if "after" in when:
        fill_questionnaire(page, example.questionnaires[person - 1], "Finish")
    page.wait_for_url(f"{PROLIFIC}?cc=*")
    page.context.close()
    assert hits
    return given


# --- the test ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("slug", sorted(p.name for p in EXAMPLES.iterdir() if (p / "study.toml").exists()))
def test_an_example_study_from_file_to_report(slug, browser, live_server, stub, settings, tmp_path):
    settings.PROLIFIC_COMPLETE_URL = PROLIFIC
    example = EXAMPLE[slug]  # a new example needs its row here
    file = EXAMPLES / slug / "study.toml"
    declared = tomllib.loads(file.read_text(encoding="utf-8"))
    first = read_first_item(EXAMPLES / slug)

    # check_study: the first item's page and prompt, nothing written
    out = io.StringIO()
    call_command("check_study", str(file), stdout=out)
    shown = out.getvalue()
    assert f"── item {first} ── participant page" in shown
    asked = [q["key"] for q in declared.get("questions", [])]  # with [[questions]]: one prompt per question
    assert all(f"── item {first}{f' [{key}]' if key else ''} ── prompt" in shown for key in asked or [""])
    assert "chat messages:" in shown and "nothing was written" in shown
    assert f"  answers: {example.offered}" in shown
    assert not Study.objects.exists()

    out = io.StringIO()
    call_command("load_study", str(file), stdout=out)
    assert f"study '{slug}' created: version 1" in out.getvalue()
    study = Study.objects.get(slug=slug)
    version = StudyVersion.objects.get(study=study)
    assert study.items.filter(is_demonstration=False).count() == count_items(EXAMPLES / slug)
    study.status = Study.Status.LIVE  # as the admin's status field does
    study.save(update_fields=["status"])

    people = len(example.questionnaires) or PEOPLE
    given = {person: take_study(browser, live_server, study, example, person) for person in range(1, people + 1)}
    for person, answers in given.items():
        participant = Participant.objects.get(study=study, prolific_pid=pid(person))
        assert participant.status == Participant.Status.COMPLETED and participant.study_version == version
        assert participant.questionnaire == (example.stored[person - 1] if example.stored else {})
        saved: dict[str, object] = {}  # item key → the answer (several questions: question key → the answer)
        for r in participant.responses.select_related("item"):
            if r.question:
                saved.setdefault(r.item.key, {})[r.question] = getattr(r, example.column)
            else:
                saved[r.item.key] = getattr(r, example.column)
        if example.column == "text":  # as the browser sent it
            answers = {k: v.replace("\n", "\r\n") for k, v in answers.items()}
        assert saved == answers

    # a model against the loopback stub, in this process
    make_endpoint(stub, name="stub", model=MODEL)
    stub.responder = example.reply
    call_command("elicit", slug, "--endpoint", "stub", "--sync", "--no-check", stdout=io.StringIO())
    run = ElicitationRun.objects.get(study=study)
    assert run.status == ElicitationRun.Status.COMPLETED and run.study_version == version
    asked = [q["key"] for q in declared.get("questions", [])]  # several questions per item: one prompt each
    items = study.main_items().count() * (len(asked) or 1)  # the model's answers
    assert len(stub.requests) == items
    assert ModelResponse.objects.filter(run=run, status=ModelResponse.Status.OK).count() == items
    if asked:
        assert {r.question: r.value for r in ModelResponse.objects.filter(run=run)} == {"sure": 5, "chance": 60}

    # the report: the generic section grouped by the file's group_by, the humans beside the model
    out = io.StringIO()
    call_command("report", slug, "--out", str(tmp_path / "report"), stdout=out)
    meta = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))["meta"]
    assert [v["version"] for v in meta["versions"]] == [f"v1 ({version.sha256[:12]})"]  # the version answered
    assert meta["versions"][0]["model_answers"] == items and meta["pooled_versions"] is False
    as_text = {name: str for name in example.grouped_by}  # group values as the report names them
    summary = pd.read_csv(tmp_path / "report" / "generic_summary.csv", dtype=as_text)
    assert set(summary["agent"]) == {"human", AGENT}
    design = ["condition"] if declared.get("factors") else []  # cells first (a study with [[factors]])
    assert example.grouped_by == [c for c in summary.columns if c in [*design, *declared["report"].get("group_by", [])]]
    human_answers = sum(len(v) if isinstance(v, dict) else 1 for a in given.values() for v in a.values())
    assert summary.loc[summary["agent"] == "human", "answers"].sum() == human_answers
    assert summary.loc[summary["agent"] == AGENT, "answers"].sum() == items
    written = {p.stem for p in (tmp_path / "report").glob("*.png")}
    assert example.figures <= written
    if example.grouped_by:  # one figure per item group (and question)
        groups = summary[[*(["question"] if asked else []), *example.grouped_by]].drop_duplicates()
        assert len([name for name in written if name.startswith("generic-") and "-by-" not in name]) == len(groups)
    expect_report(slug, summary, tmp_path / "report", out.getvalue())

    # the export: one row per answer, the questionnaire's columns, the version
    export = tmp_path / f"{slug}.csv"
    call_command("export", slug, "--format", "csv", "--out", str(export), stdout=io.StringIO())
    rows = read_csv(export, study_layout(study))
    assert len(rows) == human_answers + items
    assert set(rows["respondent_type"]) == {"human", "model"}
    fields = [f["name"] for f in declared.get("questionnaire", [])]
    # the questionnaire's columns right after the fixed ones (then the question, the items' fields, the design)
    assert list(rows.columns)[len(COLUMNS):len(COLUMNS) + len(fields)] == fields
    humans = rows[rows["respondent_type"] == "human"]
    for name in fields:
        by_person = {example.stored[p - 1].get(name) for p in given}
        assert {None if pd.isna(v) else v for v in humans[name]} == by_person
    assert set(rows["study_version"]) == {version.number}  # every person and the run saw version 1
    assert set(rows["question"]) == (set(asked) or {SINGLE_QUESTION})  # each answer's question
    codebook = json.loads(export.with_name(f"{slug}-codebook.json").read_text(encoding="utf-8"))
    assert [c["column"] for c in codebook] == list(rows.columns)  # every column named, in order
    named = {c["column"] for c in codebook if c["source"] == "item"}  # every item field (the key is item_key)
    assert {ITEM_PREFIX + f for f in item_fields(EXAMPLES / slug)} - named == {ITEM_PREFIX + declared.get(
        "design", {}).get("key", "key")}
    if example.column == "text":  # free text exported as written, with no number
        assert rows["value"].isna().all() and rows["text"].str.len().gt(0).all()
        model = rows[rows["respondent_type"] == "model"]
        assert set(model["text"]) == {"It sounds unsure, because ‘doubt’ says the speaker expects the opposite."}
    if declared.get("factors"):
        conditions_walk(slug, study, stub, tmp_path, given, items)
    elif declared.get("agents"):  # the declared agents, with personas drawn from the people who took part
        stub.reset()
        stub.responder = persona_reply
        call_command("elicit", slug, "--all-agents", "--sync", "--no-check", stdout=io.StringIO())
        agent_run = ElicitationRun.objects.get(study=study, agent=declared["agents"][0]["name"])
        assert agent_run.status == ElicitationRun.Status.COMPLETED
        assert sorted(p["source"] for p in agent_run.personas) == sorted(hashed_id(pid(p)) for p in given)
        assert sorted(p["fields"]["age"] for p in agent_run.personas) == sorted(s["age"] for s in example.stored)
        assert ModelResponse.objects.filter(run=agent_run, status=ModelResponse.Status.OK).count() == items * people
        assert all(r.body["messages"][0]["content"].startswith("You are a ") for r in stub.requests)
        persona_walk(slug, study, stub, tmp_path, people * items)


def conditions_walk(slug: str, study: Study, stub, folder: Path, given: dict, items: int) -> None:
    """Issue 31's walk: the four people are one per cell, each kept their cell and saw both blocks in a
    counterbalanced order; the declared agent is asked under every cell, the report sets people and the agent
    side by side per cell, the export carries the cell and the block order, and the package reproduces."""
    people = Participant.objects.filter(study=study)
    assert sorted(people.values_list("condition", flat=True)) == ["doctor-gain", "doctor-loss", "friend-gain",
                                                                  "friend-loss"]
    for person in people:
        saw = [s.item.key.split("-")[0] for s in person.assignments.select_related("item").order_by("position")]
        assert saw == [person.block_order[0]] * 5 + [person.block_order[1]] * 5
        sure = [a["sure"] if isinstance(a, dict) else a for a in given[int(person.prolific_pid[-2:])].values()]
        assert sum(sure) == (60 if person.condition[0] == "d" else 30)  # a doctor sounds surer: the cell was kept
    stub.reset()
    stub.responder = lambda request: Reply.answer("6" if "Your doctor" in request.prompt_text else "2")
    call_command("elicit", slug, "--all-agents", "--sync", "--no-check", stdout=io.StringIO())
    runs = ElicitationRun.objects.filter(study=study, agent="advice-model")
    assert sorted(runs.values_list("condition", flat=True)) == sorted(people.values_list("condition", flat=True))
    assert all(r.status == ElicitationRun.Status.COMPLETED for r in runs)
    call_command("report", slug, "--out", str(folder / "cells"), "--no-figures", stdout=io.StringIO())  # tables
    cells = pd.read_csv(folder / "cells" / "generic_cells.csv")
    if "question" in cells.columns:  # several questions per item: the first one's (how sure)
        cells = cells[cells["question"] == study.definition["questions"][0]["key"]]
    cells = cells.set_index(["condition", "agent"])
    assert cells.loc[("doctor-loss", "human"), "mean"] == 6 and cells.loc[("doctor-loss", "advice-model"), "mean"] == 6
    assert cells.loc[("friend-gain", "human"), "mean"] == 3 and cells.loc[("friend-gain", "advice-model"), "mean"] == 2
    export = folder / "cells.csv"
    call_command("export", slug, "--format", "csv", "--out", str(export), stdout=io.StringIO())
    rows = read_csv(export, study_layout(study))
    humans = rows[rows["respondent_type"] == "human"]
    assert set(humans["block_order"]) <= {"health|money", "money|health"} and humans["condition"].notna().all()
    assert (rows.loc[rows["agent"] == "advice-model", "condition_speaker"].value_counts() == 2 * items).all()
    package = folder / f"{slug}.zip"
    call_command("package", slug, "--out", str(package), stdout=io.StringIO())
    out = io.StringIO()
    call_command("reproduce", str(package), stdout=out)
    assert out.getvalue().rstrip().endswith("no differences")


def persona_reply(request: RecordedRequest) -> Reply:
    """The persona-conditioned model: women 20 points above men, older personas a little higher."""
    preamble = request.body["messages"][0]["content"]
    age = int(re.search(r"a (\d+)-year-old", preamble).group(1))
    return Reply.answer(str((70 if " woman " in preamble else 50) + age // 10))


def persona_walk(slug: str, study: Study, stub, folder: Path, answers: int) -> None:
    """Issue 21's walk once the declared agent has asked as each participant: the report grouped by gender (humans
    beside the persona model, both differences), a replication package, ``reproduce`` in a fresh database (no
    difference), a changed answer in the zip refused, and ``--rerun-models`` against the stub."""
    run = ElicitationRun.objects.get(study=study, agent="mirror")
    answered = ModelResponse.objects.filter(run=run, status=ModelResponse.Status.OK)
    assert answered.count() == answers
    woman = answered.filter(persona__gender="woman").first()
    assert woman.prompt.content[0]["content"].startswith("You are a ") and " woman " in woman.prompt.content[0]["content"]

    out = io.StringIO()
    call_command("report", slug, "--out", str(folder / "grouped"), stdout=out)
    groups = pd.read_csv(folder / "grouped" / "generic_groups.csv").set_index(["agent", "group"])
    assert {("human", "woman"), ("human", "man"), ("mirror", "woman"), ("mirror", "man")} <= set(groups.index)
    assert groups.loc[("human", "woman"), "units"] == 3 and groups.loc[("mirror", "man"), "units"] == 2
    # the mirror: women 70 + age//10 (3, 4, 5 → 74), men 50 + (6, 2 → 54); the humans: person 1, 4, 6 vs 2, 5
    assert groups.loc[("mirror", "woman"), "mean"] == 74 and groups.loc[("mirror", "man"), "mean"] == 54
    diffs = pd.read_csv(folder / "grouped" / "generic_group_differences.csv")
    pair = diffs[(diffs["group_a"] == "woman") & (diffs["group_b"] == "man")].set_index("agent")
    assert pair.loc["mirror", "difference"] == 20 and pair.loc["mirror", "humans_difference"] == pytest.approx(
        pair.loc["human", "difference"])
    assert pair.loc["human", "difference"] == pytest.approx((1 + 4 + 6) / 3 - (2 + 5) / 2)
    assert (folder / "grouped" / "generic-groups-gender.png").exists()

    package = folder / f"{slug}.zip"
    call_command("package", slug, "--out", str(package), stdout=io.StringIO())
    out = io.StringIO()
    call_command("reproduce", str(package), stdout=out)
    assert out.getvalue().rstrip().endswith("no differences")

    tampered = folder / "tampered.zip"
    with zipfile.ZipFile(package) as source, zipfile.ZipFile(tampered, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith("human_answers.jsonl"):
                data = data.replace(b'"value": 71', b'"value": 72', 1).replace(b'"value":71', b'"value":72', 1)
                assert data != source.read(info)
            target.writestr(info, data)
    with pytest.raises(CommandError, match="human_answers.jsonl"):
        call_command("reproduce", str(tampered), stdout=io.StringIO())

    out = io.StringIO()
    from elicitation.models import ModelEndpoint

    ModelEndpoint.objects.filter(name="stub").update(price_prompt_per_1k="0.001")  # --yes --budget needs prices
    call_command("reproduce", str(package), "--rerun-models", "--endpoint", "stub", "--yes", "--budget", "10",
                 stdout=out)
    assert "would send" in out.getvalue() and "mirror" in out.getvalue()


def expect_report(slug: str, summary: pd.DataFrame, folder: Path, printed: str) -> None:
    """What each example's generic section must say."""
    rows = summary.set_index([*EXAMPLE[slug].grouped_by, "agent"]) if EXAMPLE[slug].grouped_by else \
        summary.set_index("agent")
    if slug == "hedge-confidence":
        # humans: doctors 6, 7, 7 (the scale ends at 7); friends 3, 4, 5; the model 6 for doctors, 4 for friends
        doctor = rows.loc[("doctor", "probably", "human")]
        assert doctor["answers"] == 3 and doctor["mean"] == pytest.approx(20 / 3) and doctor["median"] == 7
        model = rows.loc[("friend", "probably", AGENT)]
        assert model["answers"] == 1 and model["mean"] == 4
        assert model["pa"] == pytest.approx(100 / 3) and model["wasserstein"] == pytest.approx(2 / 3)
        assert rows.loc[("doctor", "probably", AGENT), "mean"] == 6  # the prompt said who speaks
        by_gender = pd.read_csv(folder / "generic_questionnaire.csv")
        assert set(by_gender["field"]) == {"gender"} and set(by_gender["group"]) == {"woman", "man"}
        man = by_gender.set_index(["condition", "expression", "group"]).loc[("doctor", "probably", "man")]
        assert man["answers"] == 1 and man["mean"] == 7
        assert "no model answer carries a persona" in printed
    elif slug == "word-choice":
        assert rows.loc[("90", "human"), "human_majority"] == "likely"
        assert rows.loc[("90", AGENT), "majority_agreement"] == 1
        assert rows.loc[("0", AGENT), "majority_agreement"] == 0 and rows.loc[("0", AGENT), "js_distance"] == 1
        shares = pd.read_csv(folder / "generic_distribution.csv")
        assert set(shares["option"]) == {"certain", "likely", "tossup", "unlikely", "impossible"}
    elif slug == "persona-mirror":
        probably = rows.loc[("probably", "human")]
        assert probably["answers"] == 6 and probably["mean"] == 73.5  # 71, 72, …, 76
        assert rows.loc[("probably", AGENT), "mean"] == 60
    elif slug == "chance-slider":
        likely = rows.loc[("likely", "human")]
        assert likely["answers"] == 2 and likely["mean"] == 77.5  # 75 and 80
        assert rows.loc[("likely", AGENT), "mean"] == 65
    elif slug == "hedged-advice":  # one person per cell; a run started by hand asks under the first cell only
        assert rows.loc[("doctor-gain", "probably", "human"), "mean"] == 6
        assert rows.loc[("friend-loss", "probably", "human"), "mean"] == 3
        assert rows.loc[("doctor-gain", "probably", AGENT), "mean"] == 5
        assert set(summary.loc[summary["agent"] == AGENT, "condition"]) == {"doctor-gain"}
    elif slug == "advice-estimates":  # per question: each cell's people (one each), the hand-started run's first cell
        rows = summary.set_index(["question", *EXAMPLE[slug].grouped_by, "agent"])
        assert rows.loc[("sure", "doctor-gain", "almost certainly", "human"), "mean"] == 7
        assert rows.loc[("sure", "friend-loss", "unlikely", "human"), "mean"] == 2
        chance = rows.loc[("chance", "friend-gain", "probably", "human")]
        assert chance["answers"] == 2 and chance["mean"] - 50 in {1, 2, 3, 4}  # 70 − 20 + the person's number
        assert rows.loc[("sure", "doctor-gain", "probably", AGENT), "mean"] == 5
        assert rows.loc[("chance", "doctor-gain", "probably", AGENT), "mean"] == 60
        assert set(summary.loc[summary["agent"] == AGENT, "condition"]) == {"doctor-gain"}
        assert summary.groupby("question")["answers"].sum().to_dict() == {"sure": 50, "chance": 50}
        flow = pd.read_csv(folder / "exclusion_flow.csv").set_index("step")["participants"]  # all three rules judged
        assert flow["analysed"] == 4 and flow.filter(like="excluded by").tolist() == [0, 0, 0, 0]
        assert len(flow.filter(like="excluded by")) == 4
    else:  # free text: counted, no metric, no figure
        assert list(summary.columns) == ["agent", "answers"]
        assert "free-text answers: counted only, no metric" in printed
        assert not list(folder.glob("generic-*.png"))


def item_fields(folder: Path) -> list[str]:
    return (folder / "items.csv").read_text(encoding="utf-8").splitlines()[0].split(",")


def read_first_item(folder: Path) -> str:
    return (folder / "items.csv").read_text(encoding="utf-8").splitlines()[1].split(",")[0]


def count_items(folder: Path) -> int:
    return len((folder / "items.csv").read_text(encoding="utf-8").strip().splitlines()) - 1
