"""Replication packages (issue 21, points 4 and 5): ``manage.py package`` writes a deterministic zip with a MANIFEST
and salted participant ids only; ``manage.py reproduce`` refuses a package that does not match its MANIFEST,
recomputes the report in a scratch SQLite database and finds no difference for a faithful package, and asks the
stored prompts again of an endpoint (the loopback stub). A study reported with a reference study (Belem's
verifiable demo against the non-verifiable one) is packaged with it (``reference/<slug>/``) and reproduces too."""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.utils import timezone

from analysis.replication.manifest import MANIFEST, parse_manifest, sha256
from elicitation.models import ElicitationRun, ModelResponse
from elicitation.runs import create_run, run_sync, start_run
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys.definition.loader import load_file
from surveys.models import Assignment, Participant, Response

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parent.parent
PIDS = {"5f1a2b3c4d5e6f7a8b9c0d1e": {"age": 34, "gender": "woman", "first_language": "yes",
                                     "education": "postgraduate degree"},
        "60aa11bb22cc33dd44ee55ff": {"age": 52, "gender": "man", "first_language": "no"},
        "61abcdefabcdefabcdef0123": {"age": 27, "gender": "woman", "first_language": "no", "education": "school"}}
TEST_PID = "test-6a7b8c9d0e1f"


def scale_reply(request) -> Reply:
    """The model: 6 when a doctor speaks, 4 otherwise."""
    return Reply.answer("6" if "Dr " in json.dumps(request.body) else "4")


@pytest.fixture
def study(stub):
    study = load_file(ROOT / "studies/examples/hedge-confidence/study.toml").study
    items = list(study.main_items().order_by("id"))
    for n, (pid, answers) in enumerate([*PIDS.items(), (TEST_PID, {"age": 40, "gender": "man",
                                                                    "first_language": "yes"})]):
        person = Participant.objects.create(study=study, prolific_pid=pid, questionnaire=answers,
                                            is_test=pid == TEST_PID)
        for position, item in enumerate(items[:8], start=1):
            slot = Assignment.objects.create(participant=person, item=item, position=position)
            value = (5 + (n + position) % 3) if item.extra.get("condition") == "doctor" else (2 + (n + position) % 4)
            Response.objects.create(assignment=slot, participant=person, item=item, value=value, raw=str(value),
                                    time_taken_ms=1000 + 37 * position)
        if n != 1:  # the second person is still answering
            person.status, person.completed_at = Participant.Status.COMPLETED, timezone.now()
            person.save()
    stub.responder = scale_reply
    run = create_run(study, make_endpoint(stub), name="stub greedy")
    start_run(run, queue=False)
    assert run_sync(run).status == ElicitationRun.Status.COMPLETED
    return study


def package(study, tmp_path, name="package.zip") -> Path:
    out = tmp_path / name
    call_command("package", study.slug, "--out", str(out), stdout=io.StringIO())
    return out


_BUILT: dict[str, bytes] = {}


@pytest.fixture
def packaged(request, tmp_path) -> Path:
    """The study's package, built once for the module (the tests that only read it share it)."""
    if "zip" not in _BUILT:
        _BUILT["zip"] = package(request.getfixturevalue("study"), tmp_path, "first.zip").read_bytes()
    path = tmp_path / "package.zip"
    path.write_bytes(_BUILT["zip"])
    return path


def reproduce(path, *args) -> tuple[str, int]:
    out = io.StringIO()
    try:
        call_command("reproduce", str(path), *args, stdout=out)
    except CommandError as exc:
        return out.getvalue() + f"\nERROR {exc}", exc.returncode
    return out.getvalue(), 0


def rewrite(path: Path, member: str, change) -> None:
    """Rewrite one member of the zip (its MANIFEST left as it was)."""
    with zipfile.ZipFile(path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    files[member] = change(files[member])
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)


def test_the_package_lists_every_file_with_its_hash_and_names_people_by_salted_ids_only(study, tmp_path):
    path = package(study, tmp_path)
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        files = {name: archive.read(name) for name in names}
        assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    listed = parse_manifest(files.pop(MANIFEST).decode())
    assert listed == {name: sha256(data) for name, data in files.items()}
    for name in ("definition/study.toml", "definition/items.jsonl", "data/prompts.jsonl", "data/runs.jsonl",
                 "data/model_answers.jsonl", "data/participants.jsonl", "data/human_answers.jsonl",
                 "report/report.json", "package.json", "dependencies.txt"):
        assert name in files, name
    figures = [n for n in files if n.startswith("report/figures/") and n.endswith(".png")]
    assert figures and all(n.replace(".png", ".json") in files and n.replace(".png", ".svg") in files for n in figures)
    everything = b"".join(files.values())
    for pid in [*PIDS, TEST_PID]:
        assert pid.encode() not in everything
    people = [json.loads(line) for line in files["data/participants.jsonl"].splitlines()]
    assert len(people) == 4 and {p["is_test"] for p in people} == {True, False}
    assert all(len(p["respondent_id"]) == 16 and "prolific_pid" not in p for p in people)
    assert {p["status"] for p in people} == {"completed", "started"}
    assert people[0]["questionnaire"]["education"] == "postgraduate degree"
    prompts = {json.loads(line)["sha256"] for line in files["data/prompts.jsonl"].splitlines()}
    used = set(ModelResponse.objects.filter(run__study=study).values_list("prompt_hash", flat=True))
    assert prompts == used and len(used) == study.main_items().count()
    answers = [json.loads(line) for line in files["data/model_answers.jsonl"].splitlines()]
    assert {a["raw_output"] for a in answers} == {"6", "4"} and {a["value"] for a in answers} == {6.0, 4.0}
    run = json.loads(files["data/runs.jsonl"].splitlines()[0])
    assert run["mode"] == "greedy" and run["max_tokens"] == 8 and "personas" in run and "agent_settings" in run
    assert "api_key_env" not in run["endpoint"]
    deps = files["dependencies.txt"].decode()
    assert "Django==" in deps and "matplotlib==" in deps
    meta = json.loads(files["package.json"])
    assert meta["platform"]["version"] and meta["study"] == study.slug
    numbers = json.loads(files[figures[0].replace(".png", ".json")])
    assert numbers["axes"] and any(ax["bars"] or ax["lines"] for ax in numbers["axes"])

    printed = io.StringIO()
    call_command("package", study.slug, "--out", str(tmp_path / "again.zip"), stdout=printed)
    assert (tmp_path / "again.zip").read_bytes() == path.read_bytes()  # deterministic: same data, same bytes
    assert f"SHA-256 {sha256(path.read_bytes())})" in printed.getvalue()  # the hash to cite with the package


def test_a_faithful_package_reproduces_with_no_difference_outside_this_database(packaged):
    before = (Participant.objects.count(), ModelResponse.objects.count(), connection.settings_dict["NAME"])
    printed, code = reproduce(packaged)
    assert code == 0, printed
    assert "rel 1e-09 or abs 1e-12" in printed
    assert "no differences" in printed
    assert "table generic_summary: same" in printed and "figure generic-" in printed
    assert (Participant.objects.count(), ModelResponse.objects.count(), connection.settings_dict["NAME"]) == before


def first_answer_changed(data: bytes) -> bytes:
    """JSON lines of answers with the first answer's value changed (by one)."""
    rows = [json.loads(line) for line in data.splitlines()]
    rows[0]["value"] += 1
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode()


def test_a_changed_answer_is_refused_naming_the_file_before_anything_is_loaded(packaged):
    path = packaged

    rewrite(path, "data/human_answers.jsonl", first_answer_changed)
    printed, code = reproduce(path)
    assert code != 0
    assert "data/human_answers.jsonl: changed" in printed and "nothing loaded" in printed


def test_a_missing_or_extra_file_is_refused_naming_it(packaged):
    path = packaged
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("report/more.csv", b"a\n")
    printed, code = reproduce(path)
    assert code != 0 and "report/more.csv: extra" in printed
    with zipfile.ZipFile(path) as archive:
        kept = {n: archive.read(n) for n in archive.namelist() if n not in ("report/more.csv", "data/prompts.jsonl")}
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in kept.items():
            archive.writestr(name, data)
    printed, code = reproduce(path)
    assert code != 0 and "data/prompts.jsonl: missing" in printed


def test_a_recomputed_difference_is_printed_and_fails(packaged):
    """A package whose report no longer matches its data (the MANIFEST rewritten too) shows the table's row."""
    from analysis.replication.manifest import zip_bytes

    path = packaged
    with zipfile.ZipFile(path) as archive:
        files = {n: archive.read(n) for n in archive.namelist() if n != MANIFEST}
    report = json.loads(files["report/report.json"])
    report["tables"]["generic_summary"][0]["mean"] += 0.5
    files["report/report.json"] = json.dumps(report).encode()
    path.write_bytes(zip_bytes(files))
    printed, code = reproduce(path)
    assert code == 1
    assert "table generic_summary: 1 difference(s)" in printed and "row 0, mean: packaged" in printed


def priced_endpoint(stub, name: str = "again"):
    """The reproducer's endpoint: the stub, with prices (``--yes --budget`` needs them)."""
    return make_endpoint(stub, name=name, price_prompt_per_1k="0.001", price_completion_per_1k="0.002")


def test_rerun_models_against_the_stub_prints_the_agreement(packaged, stub):
    path = packaged
    stub.responder = scale_reply
    priced_endpoint(stub)
    asked = len(stub.requests)
    printed, code = reproduce(path, "--rerun-models", "--endpoint", "again", "--yes", "--budget", "1")
    assert code == 0, printed
    n = sum(1 for line in (ROOT / "studies/examples/hedge-confidence/items.csv").read_text().splitlines()[1:] if line)
    assert f"would send {n} request(s) to endpoint 'again' (model 'stub-model'" in printed
    assert f"≤{8 * n:,} completion tokens, ≈ $0.0" in printed
    assert f'{n} request(s): {{"max_tokens": 8, "temperature": 0.0}}' in printed
    assert f"{n} answers, {n} identical, agreement 1.000" in printed
    assert len(stub.requests) - asked == n
    sent = [r.body for r in stub.requests[-n:]]
    assert all(body["max_tokens"] == 8 and body["temperature"] == 0.0 and body["model"] == "stub-model"
               for body in sent)

    stub.responder = lambda request: Reply.answer("5")  # another model: never the packaged 6 or 4
    printed, code = reproduce(path, "--rerun-models", "--endpoint", "again", "--yes", "--budget", "1")
    assert f"{n} answers, 0 identical, agreement 0.000" in printed


def test_the_api_and_the_admin_serve_the_same_package_as_the_command(study, tmp_path, admin_client, admin_user):
    from rest_framework.authtoken.models import Token

    expected = package(study, tmp_path).read_bytes()
    token = Token.objects.create(user=admin_user).key
    response = admin_client.get(f"/api/studies/{study.slug}/package/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == f'attachment; filename="{study.slug}-replication.zip"'
    assert response.content == expected
    page = admin_client.get(f"/admin/surveys/study/{study.pk}/change/").content.decode()
    link = f"/admin/analysis/studyanalysis/{study.pk}/package.zip"
    assert f'href="{link}">Download replication package</a>' in page
    assert admin_client.get(link).content == expected


def test_sampled_runs_are_compared_by_wasserstein_1_or_total_variation_per_item():
    from analysis.replication.rerun import distance, parsed

    def number(v):
        return (v, None, None, None, None)

    # item 1: {2, 4} against {3, 5} → W1 = 1; item 2: {6, 6} against {6, 6} → 0; unparseable answers are left out
    pairs = [(1, number(2.0), number(3.0)), (1, number(4.0), number(5.0)), (2, number(6.0), number(6.0)),
             (2, number(6.0), (None,))]
    assert distance(pairs) == (0.5, "wasserstein-1")

    def choice(c):
        return (None, c, None, None, None)

    # shares {a: 1/2, b: 1/2} against {a: 1}: TV = 1/2
    assert distance([(1, choice("a"), choice("a")), (1, choice("b"), choice("a"))]) == (0.5, "total variation")
    assert parsed(ModelResponse(status="unparseable", raw_output="?")) == (None,)
    assert parsed(ModelResponse(status="ok", value=3.0)) == (3.0, None, None, None, None)
    assert parsed(ModelResponse(status="ok", value=0.0)) == (0.0, None, None, None, None)


# --- a study reported with its reference study (Belem's verifiable demo scored against the non-verifiable one) ---
@pytest.fixture
def belem_pair(stub):
    """``demo`` and ``demo-verifiable`` (reference ``demo``) from the shipped definitions, with attentive people
    and a contrarian in each and a greedy stub run on 30 items of each."""
    import random

    from families.belem.demo import load_nonverifiable_demo, load_verifiable_demo
    from test_analysis_factories import SHIFT, attentive, contrarian

    nv, v = load_nonverifiable_demo().study, load_verifiable_demo().study
    assert v.reference_study == nv
    rng = random.Random(5)
    for n in range(6):
        attentive(nv, f"nv-person-{n}", rng)
        attentive(v, f"v-person-{n}", rng, shift={"true": SHIFT, "false": -SHIFT})
    contrarian(nv, "nv-spam", rng)
    contrarian(v, "v-spam", rng)
    stub.responder = lambda request: Reply.answer("70" if "likely" in json.dumps(request.body) else "30")
    endpoint = make_endpoint(stub)
    for study in (nv, v):
        run = create_run(study, endpoint, items=list(study.main_items().order_by("id")[:30]), name="stub greedy")
        start_run(run, queue=False)
        assert run_sync(run).status == ElicitationRun.Status.COMPLETED
    return nv, v


def test_a_study_with_a_reference_study_is_packaged_with_it_and_reproduces(belem_pair, tmp_path):
    nv, v = belem_pair
    path = package(v, tmp_path)
    with zipfile.ZipFile(path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    listed = parse_manifest(files.pop(MANIFEST).decode())
    assert listed == {name: sha256(data) for name, data in files.items()}
    own = {n for n in files if n.startswith(("definition/", "data/"))}
    assert {f"reference/demo/{n}" for n in own} == {n for n in files if n.startswith("reference/")}
    assert b'reference = "demo"' in files["definition/study.toml"]
    assert json.loads(files["package.json"])["reference"] == "demo"
    people = [json.loads(line) for line in files["reference/demo/data/participants.jsonl"].splitlines()]
    assert len(people) == 7 and all(len(p["respondent_id"]) == 16 for p in people)
    assert b"nv-person-0" not in b"".join(files.values())
    answers = files["reference/demo/data/model_answers.jsonl"].splitlines()
    assert len(answers) == 30 and len(files["data/model_answers.jsonl"].splitlines()) == 30
    report = json.loads(files["report/report.json"])
    assert report["meta"]["non_verifiable_study"] == "demo" and "summary" in report["tables"]

    printed, code = reproduce(path)
    assert code == 0, printed
    assert "no differences" in printed and "table summary: same" in printed

    rewrite(path, "reference/demo/data/human_answers.jsonl", first_answer_changed)
    printed, code = reproduce(path)
    assert code != 0
    assert "reference/demo/data/human_answers.jsonl: changed" in printed and "nothing loaded" in printed


def test_the_reference_study_is_loaded_first_and_its_report_numbers_come_from_it(belem_pair, tmp_path):
    """A package whose reference answers were changed with the MANIFEST rewritten too: the recomputed reference
    distribution differs, so the difference shows in the Belem tables (the reference was read)."""
    from analysis.replication.manifest import zip_bytes

    nv, v = belem_pair
    path = package(v, tmp_path)
    with zipfile.ZipFile(path) as archive:
        files = {n: archive.read(n) for n in archive.namelist() if n != MANIFEST}
    rows = [json.loads(line) for line in files["reference/demo/data/human_answers.jsonl"].splitlines()]
    for row in rows:
        row["value"] = 100.0 - row["value"]
    files["reference/demo/data/human_answers.jsonl"] = "".join(json.dumps(r) + "\n" for r in rows).encode()
    path.write_bytes(zip_bytes(files))
    printed, code = reproduce(path)
    assert code == 1, printed
    assert "table summary:" in printed and "table summary: same" not in printed

    path.write_bytes(zip_bytes({n: data for n, data in files.items() if not n.startswith("reference/")}))
    printed, code = reproduce(path)  # the reference study left out (MANIFEST rewritten): its definition says why
    assert code != 0
    assert "cannot load the package: definition/study.toml at study.reference: no other study called 'demo'" in printed


def test_a_package_without_a_reference_has_no_reference_folder_or_key(packaged):
    with zipfile.ZipFile(packaged) as archive:
        names = archive.namelist()
        meta = json.loads(archive.read("package.json"))
    assert not [n for n in names if n.startswith("reference/")] and "reference" not in meta


def test_a_reference_study_of_another_researcher_or_a_chain_of_them_is_refused(django_user_model, tmp_path):
    """The package holds the reference study's raw data: with ``--as`` (and from the API and the admin) it must
    be the user's to see; a chain of references is refused naming the three studies."""
    from surveys.models import Study

    ana = django_user_model.objects.create_user("ana", is_staff=True)
    other = django_user_model.objects.create_user("other", is_staff=True)
    first = Study.objects.create(slug="first", title="First", owner=other)
    second = Study.objects.create(slug="second", title="Second", reference_study=first, owner=other)
    third = Study.objects.create(slug="third", title="Third", reference_study=second, owner=ana)
    out = tmp_path / "package.zip"
    with pytest.raises(CommandError, match="'third' is reported with 'second', which belongs to another researcher"):
        call_command("package", "third", "--out", str(out), "--as", "ana", stdout=io.StringIO())
    from django.contrib.auth.models import Permission
    from django.test import Client
    from rest_framework.authtoken.models import Token

    ana.user_permissions.add(Permission.objects.get(content_type__app_label="analysis", codename="view_studyanalysis"))
    token = Token.objects.create(user=ana).key
    response = Client().get("/api/studies/third/package/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 409 and "belongs to another researcher" in response.json()["detail"]
    second.shared_with.add(ana)
    with pytest.raises(CommandError, match="'third' is reported with 'second', which is reported with 'first'"):
        call_command("package", "third", "--out", str(out), "--as", "ana", stdout=io.StringIO())
    with pytest.raises(CommandError, match="which is reported with 'first'"):
        package(third, tmp_path)
    assert not out.exists()
