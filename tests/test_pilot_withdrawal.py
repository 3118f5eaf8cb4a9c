"""What a first-time researcher needs around the real participants: declined consent recorded, test (pilot)
participants kept out of the data, withdrawals honoured with an audit record, runs refused when the
endpoint's key variable is unset, and admin lists that fit a laptop."""
from __future__ import annotations

import io
import random
import re
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from analysis.dataset import human_answers
from analysis.exports import export_study, hashed_id, read_csv
from families.belem.attention import apply_attention_filter
from elicitation.models import ElicitationRun
from elicitation.runs import RunStateError, create_run, resume_run, start_run
from stub_openai import make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys import flow
from surveys.assignment import item_usage
from families.belem.instrument import EXPRESSIONS
from surveys.models import Participant, Response, Study, Withdrawal
from surveys.participation import participation
from surveys.raw_export import COLUMNS as RAW_COLUMNS, raw_rows
from surveys.test_mode import pilot_token
from surveys.withdrawal import WithdrawalError, remove_test_participants, withdraw

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"


@pytest.fixture
def study(imported_nv):
    imported_nv.status = Study.Status.LIVE
    imported_nv.save()
    return imported_nv


def consent_url(study: Study) -> str:
    return reverse("surveys:consent", kwargs={"slug": study.slug})


def finish(study: Study, pid: str, *, test: bool = False, seed: int = 1) -> Participant:
    """A participant who enters (through a test link when ``test``) and answers attentively to the end."""
    params = {"PROLIFIC_PID": pid}
    if test:
        params["test"] = pilot_token(study)
    participant = flow.enter(study, params)
    flow.record_consent(participant, True)
    flow.record_instructions(participant)
    flow.record_pledge(participant, random.Random(seed))
    rng = random.Random(seed)
    while (progress := flow.current_step(participant)).step == flow.Step.ITEM:
        item = progress.slot.item
        value = 50 if item.is_control else 100 - 5 * EXPRESSIONS.index(item.expression)
        value = max(0, min(100, value + rng.choice([-5, 0, 5])))
        assert flow.submit_answer(participant, progress.slot.position, item.pk, str(value)).outcome == "saved"
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED
    return participant


# --- declined consent -----------------------------------------------------------------------------
def test_declining_is_recorded_and_counted_in_the_decline_rate(client, study):
    assert client.get(f"/s/{study.slug}/?PROLIFIC_PID={PID}").status_code == 302
    before = timezone.now()
    response = client.post(consent_url(study), {"step": "consent", "choice": "decline"})
    assert response.status_code == 200 and "Please return the study on Prolific" in response.content.decode()
    participant = Participant.objects.get(prolific_pid=PID)
    assert participant.status == Participant.Status.DECLINED
    assert participant.declined_at >= before and participant.consented_at is None
    assert not participant.assignments.exists()

    finish(study, "a" * 24)
    counts = participation(study)
    assert (counts["entered"], counts["declined"], counts["completed"]) == (2, 1, 1)
    assert counts["decline_rate"] == 0.5
    assert counts["completion_rate"] == 1.0  # of those who consented: the decline is not an unfinished participant


def test_a_participant_who_declined_may_change_their_mind(client, study):
    client.get(f"/s/{study.slug}/?PROLIFIC_PID={PID}")
    client.post(consent_url(study), {"step": "consent", "choice": "decline"})
    assert client.get(f"/s/{study.slug}/?PROLIFIC_PID={PID}")["Location"] == consent_url(study)
    assert client.post(consent_url(study), {"step": "consent", "choice": "agree"}).status_code == 302
    participant = Participant.objects.get(prolific_pid=PID)
    assert participant.status == Participant.Status.STARTED and participant.consented_at
    assert participant.declined_at is not None  # when they declined is kept
    assert participation(study)["declined"] == 0


def test_the_admin_study_list_and_report_page_show_the_declines(admin_client, study):
    for n in range(3):
        participant = flow.enter(study, {"PROLIFIC_PID": f"p{n}"})
        flow.record_consent(participant, n != 0)
    page = admin_client.get(reverse("admin:surveys_study_changelist")).content.decode()
    assert "0 / 3 · 1 declined (33%)" in page
    report = admin_client.get(reverse("admin:analysis_studyanalysis_report", args=[study.pk])).content.decode()
    assert "3 entered: 0 completed (0% of 2 who consented), 1 declined consent (33.3%)" in report


# --- test participants ----------------------------------------------------------------------------
def test_show_links_prints_a_test_link_that_makes_a_test_participant(study, client):
    out = io.StringIO()
    call_command("show_links", "--base", "http://127.0.0.1:8000", stdout=out)
    [link] = re.findall(r"try it as a participant: (\S+)", out.getvalue())
    url = urlsplit(link)
    assert client.get(f"{url.path}?{url.query}").status_code == 302
    assert Participant.objects.get(study=study).is_test


@pytest.mark.parametrize("token", ["1", "forged-token", "__other_study__"])
def test_a_forged_or_foreign_test_marker_is_refused_and_creates_nothing(study, client, token):
    if token == "__other_study__":
        token = pilot_token(Study.objects.create(slug="other", title="Other"))
    response = client.get(f"/s/{study.slug}/?PROLIFIC_PID={PID}&test={token}")
    assert response.status_code == 400 and "test link is not valid" in response.content.decode()
    assert not Participant.objects.exists()


def test_the_admin_test_link_button_gives_a_fresh_test_participant(admin_client, study):
    target = admin_client.get(reverse("admin:surveys_study_test_participant", args=[study.pk]))["Location"]
    assert target.startswith(f"/s/{study.slug}/?PROLIFIC_PID=")
    assert admin_client.get(target).status_code == 302
    assert Participant.objects.get().is_test


def test_test_participants_stay_out_of_balancing_analysis_filter_and_exports(study, tmp_path):
    real = finish(study, "r" * 24)
    usage_after_real = item_usage(study)
    tester = finish(study, "t" * 24, test=True, seed=2)
    assert tester.is_test
    assert item_usage(study) == usage_after_real  # the test participant used up nothing

    answers = human_answers(study)
    assert set(answers["participant_id"]) == {real.pk}
    result = apply_attention_filter(study)
    assert result.evaluated == 1
    tester.refresh_from_db()
    assert tester.attention_included is None  # never evaluated

    default, with_tests = tmp_path / "default.csv", tmp_path / "with-tests.csv"
    export_study(study, "csv", default)
    export_study(study, "csv", with_tests, include_test=True)
    rows, rows_all = read_csv(default), read_csv(with_tests)
    assert set(rows["respondent_id"]) == {hashed_id(real.prolific_pid)}
    tests = rows_all[rows_all["respondent_id"] == hashed_id(tester.prolific_pid)]
    assert len(tests) == 30 and set(tests["respondent_type"]) == {"test"}

    raw = [dict(zip(RAW_COLUMNS, row)) for row in raw_rows(study)]
    assert {(r["prolific_pid"], r["test"]) for r in raw} == {(real.prolific_pid, "false"),
                                                            (tester.prolific_pid, "true")}
    assert participation(study)["test_participants"] == 1 and participation(study)["entered"] == 1


def test_test_participants_are_removed_with_their_answers_and_only_they(study):
    real = finish(study, "r" * 24)
    tester = finish(study, "t" * 24, test=True, seed=2)
    with pytest.raises(WithdrawalError, match="not test participants"):
        remove_test_participants(Participant.objects.all(), by="tester")
    assert Response.objects.count() == 60  # nothing removed

    out = io.StringIO()
    call_command("remove_test_participants", study.slug, stdout=out)  # dry run
    assert "1 test participant(s) with 30 answers" in out.getvalue() and Response.objects.count() == 60
    call_command("remove_test_participants", study.slug, "--yes", stdout=out)
    assert list(Participant.objects.all()) == [real]
    assert Response.objects.count() == 30
    record = Withdrawal.objects.get()
    assert (record.reason, record.was_test, record.responses_deleted, record.respondent_id) == (
        "test", True, 30, hashed_id(tester.prolific_pid))
    assert flow.enter(study, {"PROLIFIC_PID": tester.prolific_pid}).pk  # a tester may come back


# --- withdrawal -----------------------------------------------------------------------------------
def test_withdraw_command_deletes_the_answers_keeps_an_audit_record_and_blocks_reentry(study, tmp_path, client):
    keep = finish(study, "k" * 24)
    gone = finish(study, PID, seed=3)
    out = io.StringIO()
    call_command("withdraw", study.slug, PID, stdout=out)  # dry run
    assert "would delete" in out.getvalue() and "30 answers" in out.getvalue()
    assert Participant.objects.filter(pk=gone.pk).exists()

    call_command("withdraw", study.slug, PID, "--yes", "--note", "Prolific message 2026-11-20", "--by", "ana",
                 stdout=out)
    assert not Participant.objects.filter(pk=gone.pk).exists()
    assert not Response.objects.filter(participant_id=gone.pk).exists()
    assert Response.objects.filter(participant=keep).count() == 30
    record = Withdrawal.objects.get()
    assert (record.study, record.reason, record.requested_by, record.note) == (
        study, "withdrawn", "ana", "Prolific message 2026-11-20")
    assert (record.responses_deleted, record.assignments_deleted, record.participant_status) == (30, 30, "completed")
    assert record.respondent_id == hashed_id(PID) and PID not in str(record.__dict__)

    export_study(study, "csv", tmp_path / "after.csv")
    assert hashed_id(PID) not in set(read_csv(tmp_path / "after.csv")["respondent_id"])
    assert set(human_answers(study)["participant_id"]) == {keep.pk}

    response = client.get(f"/s/{study.slug}/?PROLIFIC_PID={PID}")
    assert response.status_code == 403 and "withdrawn" in response.content.decode()
    assert not Participant.objects.filter(prolific_pid=PID).exists()
    with pytest.raises(CommandError, match="already removed"):
        call_command("withdraw", study.slug, PID, "--yes")
    with pytest.raises(CommandError, match="no participant"):
        call_command("withdraw", study.slug, "nobody", "--yes")


def test_admin_withdraw_action_asks_first_then_removes(admin_client, study):
    gone = finish(study, PID)
    changelist = reverse("admin:surveys_participant_changelist")
    data = {"action": "withdraw", "_selected_action": [gone.pk]}
    confirm = admin_client.post(changelist, data)
    assert confirm.status_code == 200 and "Yes, delete their data" in confirm.content.decode()
    assert Participant.objects.filter(pk=gone.pk).exists()

    done = admin_client.post(changelist, data | {"confirm": "yes", "note": "by e-mail"}, follow=True)
    assert "1 participant(s) removed with 30 answers" in done.content.decode()
    assert not Participant.objects.exists() and not Response.objects.exists()
    record = Withdrawal.objects.get()
    assert (record.requested_by, record.note) == ("admin", "by e-mail")
    audit = admin_client.get(reverse("admin:surveys_withdrawal_changelist")).content.decode()
    assert record.respondent_id in audit and PID not in audit


def test_admin_refuses_removing_real_participants_as_test_data(admin_client, study):
    real = finish(study, PID)
    response = admin_client.post(reverse("admin:surveys_participant_changelist"),
                                 {"action": "remove_test", "_selected_action": [real.pk], "confirm": "yes"},
                                 follow=True)
    assert "not test participants" in response.content.decode()
    assert Participant.objects.filter(pk=real.pk).exists()


def test_withdraw_function_names_a_missing_participant(study):
    with pytest.raises(WithdrawalError, match="no participant with PROLIFIC_PID 'nobody'"):
        withdraw(study, "nobody", by="x")


# --- endpoint key variable ------------------------------------------------------------------------
def test_a_run_on_an_endpoint_whose_key_variable_is_unset_is_refused_before_it_starts(
        stub, study, monkeypatch, admin_client):  # noqa: F811
    monkeypatch.delenv("I13_UNSET_API_KEY", raising=False)
    endpoint = make_endpoint(stub, api_key_env="I13_UNSET_API_KEY")
    run = create_run(study, endpoint, items=study.main_items()[:2])
    with pytest.raises(RunStateError, match="I13_UNSET_API_KEY, which is not set"):
        start_run(run, queue=False)
    run.refresh_from_db()
    assert run.status == ElicitationRun.Status.DRAFT and not run.responses.exists() and stub.requests == []

    page = admin_client.get(reverse("admin:elicitation_elicitationrun_monitor", args=[run.pk])).content.decode()
    assert "I13_UNSET_API_KEY" in page and 'value="Start run"' not in page

    with pytest.raises(CommandError, match="I13_UNSET_API_KEY"):
        call_command("elicit", study.slug, "--endpoint", endpoint.name, "--sync", stdout=io.StringIO())
    assert ElicitationRun.objects.count() == 1  # the command created no second run

    monkeypatch.setenv("I13_UNSET_API_KEY", "sk-test")
    start_run(run, queue=False)
    ElicitationRun.objects.filter(pk=run.pk).update(status=ElicitationRun.Status.CANCELLED)
    monkeypatch.delenv("I13_UNSET_API_KEY")
    with pytest.raises(RunStateError, match="I13_UNSET_API_KEY"):
        resume_run(ElicitationRun.objects.get(pk=run.pk), queue=False)


# --- admin lists ----------------------------------------------------------------------------------
def test_participant_list_shows_rounded_rho(admin_client, study):
    participant = finish(study, PID)
    Participant.objects.filter(pk=participant.pk).update(live_attention_rho=0.9412345678901234,
                                                         attention_rho=0.123456789, attention_included=False)
    page = admin_client.get(reverse("admin:surveys_participant_changelist")).content.decode()
    assert "passed (0.94)" in page and "excluded (0.12)" in page
    assert "0.9412345" not in page and "0.123456" not in page


def test_a_withdrawn_test_participant_is_not_counted_as_withdrew(admin_client, study):
    real, tester = finish(study, "r" * 24), finish(study, "t" * 24, test=True, seed=2)
    withdraw(study, tester.prolific_pid, by="me")
    assert participation(study)["withdrawn"] == 0
    report = admin_client.get(reverse("admin:analysis_studyanalysis_report", args=[study.pk])).content.decode()
    assert "withdrew" not in report
    withdraw(study, real.prolific_pid, by="me")
    assert participation(study)["withdrawn"] == 1


def test_the_study_list_counts_only_real_completed_participants(admin_client, study):
    finish(study, "r" * 24)
    finish(study, "t" * 24, test=True, seed=2)
    page = admin_client.get(reverse("admin:surveys_study_changelist")).content.decode()
    assert "1 / 1 · 1 test" in page
    analyses = admin_client.get(reverse("admin:analysis_studyanalysis_changelist")).content.decode()
    assert re.search(r'<td class="field-completed">1</td>', analyses), analyses  # the Analysis list's column


def test_a_test_participant_sees_the_banner_on_every_page_and_is_not_sent_to_prolific(admin_client, client, study):
    target = admin_client.get(reverse("admin:surveys_study_test_participant", args=[study.pk]))["Location"]
    assert "PROLIFIC_PID=TEST" in target  # a test link looks different
    step = client.get(target)["Location"]
    pages = [client.get(step)]
    client.post(step, {"choice": "agree"})
    tester = Participant.objects.get()
    assert tester.is_test and tester.prolific_pid.startswith("TEST")
    flow.record_instructions(tester)
    flow.record_pledge(tester, random.Random(1))
    pages.append(client.get(reverse("surveys:item", kwargs={"slug": study.slug})))
    while (progress := flow.current_step(tester)).step == flow.Step.ITEM:
        flow.submit_answer(tester, progress.slot.position, progress.slot.item_id, {"value": "50"}, None)
    session = client.session
    session[f"hedgelab.redirect.{study.pk}"] = True  # as right after the last answer
    session.save()
    done = client.get(reverse("surveys:done", kwargs={"slug": study.slug}))
    pages.append(done)
    for page in pages:
        assert page.status_code == 200 and 'id="test-banner"' in page.content.decode()
    text = done.content.decode()
    assert "http-equiv=\"refresh\"" not in text and "prolific-link" not in text and 'id="test-done"' in text
    # a real participant's pages carry no banner, and the completion page sends them back to Prolific
    other = Client()
    other.get(f"/s/{study.slug}/?PROLIFIC_PID={PID}")
    assert 'id="test-banner"' not in other.get(consent_url(study)).content.decode()
