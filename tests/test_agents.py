"""Agents declared in a study's definition (``[[agents]]``): the schema's checks by key path, the content hash
that leaves them out, export and load again, and starting them (``elicit --all-agents``, the API, the admin)."""
from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from agent_studies import EXAMPLE, PEOPLE, TEMPLATE, agent, example_text, load_example
from elicitation.models import ElicitationRun, ModelResponse
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys.definition.errors import DefinitionError
from surveys.definition.export import export
from surveys.definition.loader import files_beside, load

pytestmark = pytest.mark.django_db


def run_command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def problems(agents: list[dict]) -> dict[str, str]:
    with pytest.raises(DefinitionError) as raised:
        load_example(agents, commit=False)
    return {p.where: p.message for p in raised.value.problems}


# --- the schema ----------------------------------------------------------------------------------------------
def test_the_shipped_example_checks_and_loads():
    loaded = load_example()
    table = loaded.study.definition["agents"][0]
    assert table["name"] == "mirror" and table["endpoint"] == "stub"
    assert table["persona"]["from"] == "participants" and table["persona"]["sample"] == 20


def test_bad_agents_are_named_by_key_path():
    found = problems([
        agent(prompt_style="cot"),
        agent(mode="greedy", samples=3),
        agent(name="other", persona={"template": "You are {{ shoe_size }}.", "people": [{"age": 3}]}),
        agent(name="third", persona={"template": TEMPLATE,
                                     "people": [{"age": 30, "gender": "robot", "first_language": "English"},
                                                {"age": 30, "gender": "man", "height": 2}]}),
    ])
    assert "unknown prompt style 'cot'" in found["agents[0].prompt_style"]
    assert "agent name 'mirror' is used more than once" in found["agents[1].name"]
    assert "one answer per item" in found["agents[1].samples"]
    assert "'shoe_size', not questionnaire field" in found["agents[2].persona.template"]
    assert "not one of the choices" in found["agents[3].persona.people[0].gender"]
    assert "not a questionnaire field" in found["agents[3].persona.people[1].height"]
    assert "lacks 'first_language'" in found["agents[3].persona.people[1]"]
    scored = problems([agent(mode="likelihood", persona={"template": TEMPLATE, "people": PEOPLE})])
    assert "likelihood mode" in scored["agents[0].persona"]
    schema = problems([agent(name="Bad Name", persona={"template": TEMPLATE}),
                       agent(name="x", persona={"template": TEMPLATE, "people": PEOPLE, "from": "participants"})])
    assert "agents[0].name" in schema and "either people" in schema["agents[0].persona"]
    assert "either people" in schema["agents[1].persona"]


def test_agents_do_not_change_the_content_hash_and_export_round_trips(stub):
    plain = load_example([])
    endpoint = make_endpoint(stub)
    ElicitationRun.objects.create(study=plain.study, endpoint=endpoint, status="completed")
    ModelResponse.objects.create(run=ElicitationRun.objects.get(), item=plain.study.main_items().first(),
                                 status="ok", value=50)
    declared = [agent(seed=4, persona={"template": TEMPLATE, "people": PEOPLE, "placement": "user"})]
    again = load_example(declared)  # answers exist, and no --new-version is needed
    assert again.version.pk == plain.version.pk and not again.new_version
    assert again.study.definition["agents"][0]["persona"]["people"] == PEOPLE
    text, lines = export(again.study)
    assert "[[agents]]" in text and 'placement = "user"' in text
    copy = load(text, "exported.toml", lambda name: lines.encode(), slug="persona-copy")
    assert copy.study.definition["agents"] == again.study.definition["agents"]
    assert copy.version.sha256 == again.version.sha256
    shipped = load(example_text(), str(EXAMPLE), files_beside(EXAMPLE), slug="persona-shipped")
    text, lines = export(shipped.study)
    assert 'from = "participants"' in text and "from_" not in text
    assert load(text, "e.toml", lambda n: lines.encode(), slug="persona-shipped-2").study.definition["agents"] == \
        shipped.study.definition["agents"]


# --- elicit --all-agents -------------------------------------------------------------------------------------
def test_all_agents_starts_those_not_run_and_skips_the_others(stub):
    make_endpoint(stub)
    study = load_example([agent("greedy-one"), agent("sampled-two", mode="sampled", samples=2, seed=1)]).study
    stub.default = Reply.answer("70")
    out = run_command("elicit", study.slug, "--all-agents", "--sync", "--no-check")
    runs = {r.agent: r for r in ElicitationRun.objects.all()}
    assert set(runs) == {"greedy-one", "sampled-two"}
    assert all(r.status == "completed" and r.study_version == study.versions.get() for r in runs.values())
    assert runs["sampled-two"].agent_settings == study.definition["agents"][1]
    assert runs["sampled-two"].temperature == 1.0 and runs["greedy-one"].temperature == 0.0
    assert ModelResponse.objects.filter(run=runs["sampled-two"]).count() == 12
    assert f"agent greedy-one: started run {runs['greedy-one'].pk}" in out
    from analysis.agents import agent_name
    assert agent_name(runs["sampled-two"]) == "sampled-two"  # the report names an agent as the file does
    runs["sampled-two"].agent = ""
    assert agent_name(runs["sampled-two"]) == "stub (sampled T=1)"  # a run started by hand: its settings
    assert "greedy-one" in out and "6/6 done" in out and "12/12 done" in out  # one line per agent
    requests = len(stub.requests)

    out = run_command("elicit", study.slug, "--all-agents", "--sync", "--no-check")
    assert f"agent greedy-one: skipped, done (run {runs['greedy-one'].pk})" in out
    assert ElicitationRun.objects.count() == 2 and len(stub.requests) == requests

    ElicitationRun.objects.filter(agent="greedy-one").update(status="running")
    ElicitationRun.objects.filter(agent="sampled-two").update(status="cancelled")
    out = run_command("elicit", study.slug, "--all-agents", "--no-check")
    assert "skipped, running" in out and f"--resume {runs['sampled-two'].pk}" in out
    assert ElicitationRun.objects.count() == 2


def test_all_agents_estimate_only_prints_the_estimates_and_sends_nothing(stub):
    """Issue 32 point 2: --all-agents --estimate-only started the runs; an estimate creates no run and sends no
    request, not even the pre-flight check (run without --no-check)."""
    make_endpoint(stub, price_prompt_per_1k="1")
    study = load_example([agent("greedy-one"), agent("sampled-two", mode="sampled", samples=2, seed=1,
                                                     persona={"template": TEMPLATE, "people": PEOPLE})]).study
    out = run_command("elicit", study.slug, "--all-agents", "--estimate-only")
    n = study.main_items().count()
    assert f"agent greedy-one on stub: estimate (in all): {n} answers, {n} requests" in out
    assert f"agent sampled-two on stub: estimate (in all): {n * 2 * 2} answers" in out  # 2 samples × 2 personas
    assert "no run created, no request sent" in out
    assert not ElicitationRun.objects.exists() and stub.requests == []
    run_command("elicit", study.slug, "--all-agents", "--sync", "--no-check")
    done = ElicitationRun.objects.get(agent="greedy-one")
    requests = len(stub.requests)
    out = run_command("elicit", study.slug, "--all-agents", "--estimate-only")
    assert f"agent greedy-one: would be skipped, done (run {done.pk})" in out
    out = run_command("elicit", "--resume", str(done.pk), "--estimate-only")
    assert "estimate (still to do): 0 answers" in out and "resumed" not in out
    assert ElicitationRun.objects.count() == 2 and len(stub.requests) == requests


def test_a_new_version_runs_the_agents_again(stub):
    make_endpoint(stub)
    study = load_example([agent()]).study
    run_command("elicit", study.slug, "--all-agents", "--sync", "--no-check")
    changed = example_text([agent()]).replace("How likely does the speaker", "How likely did the speaker")
    load(changed, str(EXAMPLE), files_beside(EXAMPLE), new_version=True)
    out = run_command("elicit", study.slug, "--all-agents", "--sync", "--no-check")
    assert "agent mirror: started run" in out
    assert sorted(r.study_version.number for r in ElicitationRun.objects.all()) == [1, 2]


def test_all_agents_refuses_with_the_agent_and_endpoint_named_and_starts_none(stub):
    make_endpoint(stub)
    study = load_example([agent("fine"), agent("lost", endpoint="gone")]).study
    with pytest.raises(CommandError, match="agent 'lost': no endpoint called 'gone'"):
        run_command("elicit", study.slug, "--all-agents", "--no-check")
    bare = load_example([], slug="no-agents").study
    with pytest.raises(CommandError, match="declares no agents"):
        run_command("elicit", bare.slug, "--all-agents")
    from_people = load_example([agent(persona={"template": TEMPLATE, "from": "participants"})], slug="nobody").study
    with pytest.raises(CommandError, match="agent 'mirror'.*no completed"):
        run_command("elicit", from_people.slug, "--all-agents", "--no-check")
    assert not ElicitationRun.objects.exists() and not stub.requests


def test_resuming_a_run_whose_prompts_cannot_be_built_says_why_and_a_fixed_file_starts_anew(stub):
    """Issue 32 point 6: a persona template that escaped the sandbox failed every answer, and --resume ended in a
    traceback. It says why in one error; the agent, fixed in the file, starts a new run."""
    endpoint = make_endpoint(stub)
    study = load_example([agent(persona={"template": TEMPLATE, "people": PEOPLE})]).study
    table = dict(study.definition["agents"][0])
    table["persona"] = dict(table["persona"], template="You are {{ ''.__class__ }}.")  # as loaded before the fix
    run = ElicitationRun.objects.create(study=study, endpoint=endpoint, agent="mirror", agent_settings=table,
                                        personas=[{"fields": p, "source": "x"} for p in PEOPLE],
                                        status="failed", status_reason="12 answers failed")
    with pytest.raises(CommandError, match=rf"run {run.pk} cannot be resumed: its prompts cannot be built "
                                           r"\(access to attribute '__class__'.*unsafe.*elicit .* --all-agents"):
        run_command("elicit", "--resume", str(run.pk), "--sync", "--no-check")
    assert not stub.requests
    stub.default = Reply.answer("40")
    out = run_command("elicit", study.slug, "--all-agents", "--sync", "--no-check")
    fresh = ElicitationRun.objects.exclude(pk=run.pk).get()
    assert f"agent mirror: started run {fresh.pk}" in out and fresh.status == "completed"
    run.refresh_from_db()
    assert run.status == "failed"  # kept as it was


# --- the API and the admin -----------------------------------------------------------------------------------
def test_the_api_starts_and_skips_the_declared_agents(stub):
    make_endpoint(stub)
    study = load_example([agent()]).study
    user = User.objects.create_superuser("boss", password="x")
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    url = f"/api/studies/{study.slug}/run-agents/?check=false"
    first = client.post(url)
    assert first.status_code == 200, first.content
    run = ElicitationRun.objects.get()
    assert first.json() == {"started": [{"agent": "mirror", "action": "started", "run": run.pk, "reason": ""}],
                            "skipped": []}
    assert run.status == "running" and run.agent == "mirror" and run.created_by == user
    second = client.post(url).json()
    assert second["started"] == [] and second["skipped"][0]["reason"] == f"running (run {run.pk})"
    lost = load_example([agent(endpoint="gone")], slug="lost").study
    refused = client.post(f"/api/studies/{lost.slug}/run-agents/")
    assert refused.status_code == 409 and "no endpoint called 'gone'" in refused.json()["detail"]
    assert client.post("/api/studies/nope/run-agents/").status_code == 404


def test_the_admin_button_lists_and_runs_the_declared_agents(stub, monkeypatch):
    from elicitation import preflight

    monkeypatch.setattr(preflight, "problem", lambda endpoint: "")  # no pre-flight request in this test
    make_endpoint(stub)
    study = load_example([agent()]).study
    client = Client()
    client.force_login(User.objects.create_superuser("boss", password="x"))
    change = client.get(reverse("admin:surveys_study_change", args=[study.pk])).content.decode()
    url = reverse("admin:elicitation_run_agents", args=[study.slug])
    assert url in change and "Run the declared agents" in change
    page = client.get(url).content.decode()
    assert "mirror" in page and "started" in page
    response = client.post(url)
    assert response.status_code == 302
    run = ElicitationRun.objects.get()
    assert run.agent == "mirror" and run.status == "running"
    assert f"skipped: running (run {run.pk})" in client.get(url).content.decode()


def test_an_agent_cannot_use_an_endpoint_that_is_not_shared_with_the_user(stub):
    from django.contrib.auth.models import Permission

    owner = User.objects.create_user("owner", is_staff=True)
    make_endpoint(stub, owner=owner)  # "stub" is the owner's, not shared
    study = load_example([agent()]).study
    staffer = User.objects.create_user("staffer", is_staff=True)
    staffer.user_permissions.add(*Permission.objects.filter(
        content_type__app_label="elicitation", codename__in=["add_elicitationrun", "change_elicitationrun"]))
    study.shared_with.add(staffer)
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=staffer).key}")
    refused = client.post(f"/api/studies/{study.slug}/run-agents/?check=false")
    assert refused.status_code == 409 and "no endpoint called 'stub'" in refused.json()["detail"]
    assert not ElicitationRun.objects.exists()
