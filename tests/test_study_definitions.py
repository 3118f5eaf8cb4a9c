"""Study definition files: load_study, export_study, check_study, versions, and refused files (issue 20)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from elicitation.prompts import build_prompt, prompt_content, prompt_hash
from surveys.definition.errors import DefinitionError
from surveys.definition.export import export_to
from surveys.definition.loader import load_file
from surveys.definition.schema import json_schema
from surveys.models import Item, Participant, Study, StudyVersion
from tests.test_analysis_factories import add_participant, add_run

TANG = """
[study]
slug = "tang-file"
title = "Tang RQ1 from a file"
kind = "wep_probability"

[design]
generator = "tang-rq1"
[design.options]
settings = ["CNC"]

[participants]
items_per_participant = 10
"""


def write(folder: Path, text: str, **files: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "study.toml"
    path.write_text(text, encoding="utf-8")
    for name, content in files.items():
        (folder / name.replace("_", ".")).write_text(content, encoding="utf-8")
    return path


def fingerprint(study: Study) -> dict[str, tuple]:
    """Every main item's page text and prompt hashes (both API styles, zero- and few-shot)."""
    out = {}
    for item in study.main_items().order_by("key"):
        page = study.kind.page_context(item)
        hashes = []
        for few_shot in (False, True):
            prompt = build_prompt(study, item, few_shot)
            hashes += [prompt_hash(prompt_content(prompt, "chat")), prompt_hash(prompt_content(prompt, "completions"))]
        out[item.key] = (page["sentence"], page["question"], tuple(page["hints"]), tuple(hashes))
    return out


def problems_of(path: Path) -> list[str]:
    with pytest.raises(DefinitionError) as caught:
        load_file(path)
    return [str(p) for p in caught.value.problems]


@pytest.mark.django_db
def test_load_creates_the_study_with_its_version(tmp_path):
    loaded = load_file(write(tmp_path, TANG))
    study = Study.objects.get(slug="tang-file")
    assert loaded.created and study.instrument == "wep_probability"
    assert study.items_per_participant == 10
    assert study.main_items().count() == loaded.items > 0
    assert set(study.main_items().values_list("context", flat=True)) == {"CNC"}
    version = StudyVersion.objects.get(study=study)
    assert version.number == 1 and len(version.sha256) == 64
    assert study.definition["study"]["title"] == "Tang RQ1 from a file"
    again = load_file(write(tmp_path, TANG))
    assert not again.created and not again.new_version and again.version == version


@pytest.mark.django_db
def test_export_then_load_into_an_empty_database_gives_the_same_study(tmp_path):
    load_file(write(tmp_path / "a", TANG))
    study = Study.objects.get(slug="tang-file")
    before = fingerprint(study)
    sha = study.versions.get().sha256
    codes = (study.completion_code, study.screened_out_code)
    export_to(study, tmp_path / "out")
    Item.objects.filter(study=study).delete()
    StudyVersion.objects.filter(study=study).delete()
    study.delete()
    assert not Study.objects.exists()
    loaded = load_file(tmp_path / "out" / "study.toml")
    copy = loaded.study
    assert fingerprint(copy) == before
    assert loaded.version.sha256 == sha
    assert (copy.completion_code, copy.screened_out_code) == codes
    assert (tmp_path / "out" / "items.jsonl").read_text().count("\n") == len(before)


@pytest.mark.django_db
def test_changing_wording_after_answers_needs_a_new_version(tmp_path):
    path = write(tmp_path, TANG)
    load_file(path)
    study = Study.objects.get(slug="tang-file")
    item = study.main_items().first()
    participant = add_participant(study, "P1", [(item, 70)])
    run = add_run(study, "stub", [(item, 60)])
    v1 = study.versions.get()
    assert participant.study_version == v1 and run.study_version == v1
    changed = write(tmp_path, TANG.replace("Tang RQ1 from a file", "Tang RQ1, new title").replace(
        "items_per_participant = 10", "items_per_participant = 12"))
    messages = problems_of(changed)
    assert "already has answers" in messages[0] and "--new-version" in messages[0]
    assert Study.objects.get(slug="tang-file").items_per_participant == 10  # nothing written
    loaded = load_file(changed, new_version=True)
    assert loaded.new_version and loaded.version.number == 2
    participant.refresh_from_db()
    assert participant.study_version == v1  # earlier answers keep their version
    newcomer = Participant.objects.create(study=study, prolific_pid="P2")
    assert newcomer.study_version == loaded.version


@pytest.mark.django_db
def test_a_file_that_returns_to_an_earlier_version_makes_it_current_again(tmp_path):
    """Issue 32 point 3: load A, load B, load A again ended in an IntegrityError (one version per content).
    The earlier version becomes current again, keeps its number and answers, and the load says so."""
    a = TANG
    b = TANG.replace("items_per_participant = 10", "items_per_participant = 12")
    first = load_file(write(tmp_path, a))
    second = load_file(write(tmp_path, b))  # no answers yet: no --new-version needed
    assert second.version.number == 2
    back = load_file(write(tmp_path, a))
    study = Study.objects.get(slug="tang-file")
    assert back.returned and back.version == first.version and study.current_version() == first.version
    assert "back to an earlier version: version 1" in back.summary() and "current again" in back.summary()
    assert study.items_per_participant == 10 and study.versions.count() == 2
    assert Participant.objects.create(study=study, prolific_pid="P1").study_version == first.version
    item = study.main_items().first()
    add_participant(study, "P2", [(item, 70)])  # answers under version 1 now
    forward = write(tmp_path, b)
    assert "already has answers" in problems_of(forward)[0]
    assert load_file(forward, new_version=True).version == second.version
    assert add_run(study, "stub", [(item, 60)]).study_version == second.version
    again = write(tmp_path, a)
    message = problems_of(again)[0]
    assert "returns to version 1's wording" in message and "--new-version" in message
    assert Study.objects.get(slug="tang-file").current_version() == second.version  # nothing written
    out = io.StringIO()
    call_command("load_study", str(again), "--new-version", stdout=out)
    assert "back to an earlier version: version 1" in out.getvalue()
    assert study.current_version() == first.version and study.versions.count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize("change, where, words", [
    (("[participants]", "[participants]\nitems_per_particpant = 3"), "participants.items_per_particpant",
     "unknown key"),
    (("items_per_participant = 10", 'items_per_participant = "ten"'), "participants.items_per_participant",
     "integer"),
    (("[participants]", '[page]\nquestion = "How likely is {{ colour }}?"\n\n[participants]'), "page.question",
     "'colour'"),
    (("[participants]", '[answer]\nshape = "choice"\noptions = []\n\n[participants]'), "answer",
     "at least one option"),
    (("[participants]", '[answer]\nshape = "scale"\nmin = 7\nmax = 1\n\n[participants]'), "answer",
     "must be below max"),
    (("[participants]", '[page]\nquestion = "{% if %}"\n\n[participants]'), "page.question", "does not parse"),
    (('generator = "tang-rq1"', 'generator = "no-such-design"'), "design.generator", "unknown design"),
])
def test_bad_definitions_are_refused_with_the_key_path_and_nothing_written(tmp_path, change, where, words):
    path = write(tmp_path, TANG.replace(*change))
    messages = problems_of(path)
    assert any(f"study.toml at {where}:" in m and words in m for m in messages), messages
    assert not Study.objects.exists() and not Item.objects.exists()


@pytest.mark.django_db
def test_item_file_problems_name_the_line_and_column(tmp_path):
    text = TANG.replace('generator = "tang-rq1"\n[design.options]\nsettings = ["CNC"]', 'items = "items.jsonl"')
    rows = [{"key": "a", "expression": "likely", "statement": "It is {} that it rains."},
            {"key": "b", "expression": "unlikely", "demo_order": -1},
            {"key": "a", "expression": "possible"}]
    body = "\n".join(json.dumps(r) for r in rows) + "\n{not json\n"
    messages = problems_of(write(tmp_path, text, items_jsonl=body))
    assert any("items.jsonl at line 2, field 'demo_order'" in m for m in messages), messages
    assert any("items.jsonl at line 3, field 'key'" in m and "duplicate item key 'a'" in m for m in messages)
    assert any("items.jsonl at line 4, column" in m and "not JSON" in m for m in messages)
    assert not Study.objects.exists()
    outside = problems_of(write(tmp_path, text.replace("items.jsonl", "../../etc/passwd")))
    assert "inside its folder" in outside[0]


@pytest.mark.django_db
def test_check_study_prints_pages_and_prompts_and_writes_nothing(tmp_path, capsys):
    call_command("check_study", str(write(tmp_path, TANG)), "--items", "1")
    out = capsys.readouterr().out
    assert "participant page" in out and "prompt (standard" in out and "OK: nothing was written" in out
    assert "how probable is it?" in out
    assert not Study.objects.exists() and not StudyVersion.objects.exists()
    with pytest.raises(CommandError, match="study.toml at participants.items_per_participant"):
        call_command("check_study", str(write(tmp_path, TANG.replace("= 10", "= 0"))))


@pytest.mark.django_db
def test_load_and_export_commands(tmp_path, capsys):
    call_command("load_study", str(write(tmp_path, TANG)), "--slug", "tang-two")
    assert "study 'tang-two' created: version 1" in capsys.readouterr().out
    call_command("export_study", "tang-two", "--out", str(tmp_path / "exported"))
    assert (tmp_path / "exported" / "study.toml").exists()
    with pytest.raises(CommandError, match="nothing loaded: 1 problem"):
        call_command("load_study", str(tmp_path / "missing.toml"))


def test_json_schema_names_every_table():
    schema = json_schema()
    assert {"study", "answer", "texts", "page", "prompt", "design", "participants", "questionnaire",
            "report"} <= set(schema["properties"])
    published = Path(__file__).resolve().parent.parent / "docs" / "reference" / "study-definition.schema.json"
    assert json.loads(published.read_text()) == schema, "regenerate: python manage.py definition_schema"


@pytest.mark.django_db
def test_a_study_file_adds_a_prompt_style_of_its_own(tmp_path):
    text = TANG + '''
[prompt.styles.terse]
block = "{{ expression }}? Answer with a number."
'''
    study = load_file(write(tmp_path, text)).study
    assert study.kind.prompt_styles[-1] == "terse" and "standard" in study.kind.prompt_styles
    item = study.main_items().first()
    prompt = build_prompt(study, item, False, style="terse")
    assert prompt.messages[-1]["content"] == f"{item.expression}? Answer with a number."
    assert build_prompt(study, item, False).text != prompt.text  # the standard style is the kind's own
    from surveys.instruments import get_instrument
    assert "terse" not in get_instrument("wep_probability").prompt_styles  # the shared kind is unchanged


@pytest.mark.django_db
def test_item_file_and_template_problems_come_together(tmp_path):
    examples = Path(__file__).resolve().parent.parent / "studies" / "examples" / "hedge-confidence"
    text = (examples / "study.toml").read_text().replace("How sure is the {{ role }}", "How sure is the {{ colour }}")
    rows = (examples / "items.csv").read_text().splitlines()
    rows[3] = rows[3].replace("doctor-3", "doctor-2", 1)
    messages = problems_of(write(tmp_path, text, items_csv="\n".join(rows) + "\n"))
    assert messages == ["items.csv at line 4, column 'key': duplicate item key 'doctor-2' (first at line 3)",
                        f"{tmp_path / 'study.toml'} at page.question: names field 'colour' that the items do not have"]
    assert not Study.objects.exists()


@pytest.mark.django_db
def test_items_added_after_loading_make_a_new_version(tmp_path):
    load_file(write(tmp_path, TANG))
    study = Study.objects.get(slug="tang-file")
    from surveys.designs import generate_items

    generate_items(study, "tang-rq1", settings=["MCNC"])  # no answers yet: version 1 is updated in place
    assert [v.number for v in study.versions.all()] == [1]
    add_participant(study, "P1", [(study.main_items().first(), 70)])
    generate_items(study, "tang-rq1", settings=["ENC"])
    assert [v.number for v in study.versions.all()] == [1, 2]
    assert study.versions.get(number=2).sha256 != study.versions.get(number=1).sha256


@pytest.mark.django_db
def test_the_shipped_bahaj_replication_loads_with_the_authors_reading():
    from surveys.definition.files import STUDIES_DIR

    loaded = load_file(STUDIES_DIR / "bahaj-authors" / "study.toml")
    study = loaded.study
    assert loaded.items == 1040 and study.report_option("reading") == "authors"
    hints = {item.extra.get("hint", "hint0") for item in study.main_items()}
    assert hints == {"hint0", "hint1", "hint3", "hint8"}
    assert {"authors-vanilla", "authors-cot"} <= set(study.kind.prompt_styles)


@pytest.mark.django_db
def test_a_verifiable_set_names_its_reference_study(tmp_path):
    from surveys.definition.files import STUDIES_DIR

    verifiable = STUDIES_DIR / "belem-verifiable" / "study.toml"
    messages = problems_of(verifiable)
    assert messages == [f"{verifiable} at study.reference: no other study called 'demo' to score this one "
                        "against: load that one first"]
    load_file(STUDIES_DIR / "belem" / "study.toml")
    study = load_file(verifiable).study
    assert study.reference_study.slug == "demo"
    export_to(study, tmp_path / "out")
    assert 'reference = "demo"' in (tmp_path / "out" / "study.toml").read_text()


@pytest.mark.django_db
def test_a_reference_must_be_the_loaders_own_or_shared_with_them():
    """The fourth review: Bob's definition pointing at Alice's ``demo`` showed demo's answers, and its participants'
    PROLIFIC_PIDs, in Bob's report. The loader looks the reference up as the API's field and the admin's form do."""
    from django.contrib.auth.models import Permission, User
    from rest_framework.test import APIClient

    from access.ownership import may_see_reference
    from surveys.definition.loader import load_as

    perms = Permission.objects.filter(codename__in=["add_study", "change_study", "add_item", "view_study"])
    alice, bob = (User.objects.create_user(name, is_staff=True) for name in ("alice", "bob"))
    bob.user_permissions.add(*perms)
    bob = User.objects.get(pk=bob.pk)
    demo = Study.objects.create(slug="demo", title="Alice's", owner=alice)
    bobs = TANG.replace('slug = "tang-file"', 'slug = "bobs"\nreference = "demo"')
    with pytest.raises(DefinitionError) as caught:
        load_as(bob, bobs.encode(), "study.toml", None)
    [problem] = caught.value.problems
    assert problem.where == "study.reference" and "'demo'" in problem.message
    assert "shared with you" in problem.message and not Study.objects.filter(slug="bobs").exists()
    api = APIClient()
    api.force_authenticate(bob)
    answer = api.post("/api/studies/definition/", {"definition": bobs}, format="json")
    assert answer.status_code == 400 and answer.json()["problems"][0]["where"] == "study.reference"
    Study.objects.create(slug="older", title="Bob's, before the rule", owner=bob, reference_study=demo)
    assert not may_see_reference(Study.objects.get(slug="older"), bob)  # so its report shows salted ids only
    demo.shared_with.add(bob)
    assert load_as(bob, bobs.encode(), "study.toml", None).study.reference_study == demo
    assert may_see_reference(Study.objects.get(slug="older"), bob)
