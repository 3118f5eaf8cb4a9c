"""Recruitment channels besides Prolific (surveys.channels): each with its own entry link (the id from a URL
parameter, or assigned here), its completion redirect with the study's codes, and its name in the exports and
the report. A link without ``channel`` stays Prolific's."""
from __future__ import annotations

import io
import random

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from analysis.exports import export_study, read_csv
from surveys import flow
from families.belem.instrument import EXPRESSIONS
from surveys.models import Participant, RecruitmentChannel, Study, Withdrawal
from surveys.participation import participation, summary_line
from surveys.raw_export import COLUMNS as RAW_COLUMNS, raw_rows

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"
SONA_DONE = "https://lab.sona-systems.com/webstudy_credit.aspx?experiment_id=12&credit_token=ab&survey_code={id}&c={code}"


@pytest.fixture
def study(imported_nv):
    imported_nv.status = Study.Status.LIVE
    imported_nv.save()
    RecruitmentChannel.objects.create(study=imported_nv, name="sona", id_param="id", completion_url=SONA_DONE)
    RecruitmentChannel.objects.create(study=imported_nv, name="list")  # ids assigned here, no redirect
    return imported_nv


def entry(study: Study, query: str) -> str:
    return f"/s/{study.slug}/?{query}"


def answer_all(participant: Participant) -> None:
    flow.record_consent(participant, True)
    flow.record_instructions(participant)
    flow.record_pledge(participant, random.Random(1))
    while (progress := flow.current_step(participant)).step == flow.Step.ITEM:
        item = progress.slot.item
        value = 50 if item.is_control else 100 - 5 * EXPRESSIONS.index(item.expression)
        flow.submit_answer(participant, progress.slot.position, progress.slot.item_id, {"value": str(value)}, None)


def done_page(client: Client, study: Study) -> str:
    session = client.session
    session[f"hedgelab.redirect.{study.pk}"] = True  # as right after the last answer
    session.save()
    return client.get(reverse("surveys:done", kwargs={"slug": study.slug})).content.decode()


def test_a_channel_link_takes_the_id_from_its_parameter_and_keeps_channels_apart(client, study):
    assert client.get(entry(study, "channel=sona&id=abc123")).status_code == 302
    sona = Participant.objects.get()
    assert sona.prolific_pid == "sona-abc123" and sona.channel.name == "sona"
    assert Client().get(entry(study, "channel=sona&id=abc123")).status_code == 302  # the same person again
    assert Participant.objects.count() == 1
    Client().get(entry(study, f"PROLIFIC_PID={PID}"))  # Prolific's link, as before
    Client().get(entry(study, f"channel=sona&id={PID}"))  # the same id on another channel: another person
    assert sorted(Participant.objects.values_list("prolific_pid", "channel__name")) == [
        (PID, None), ("sona-5f1a2b3c4d5e6f7a8b9c0d1e", "sona"), ("sona-abc123", "sona")]
    for query, words in (("channel=sona", "has no id"), ("channel=sona&id=a%3Cb", "is not valid"),
                         ("channel=mturk&workerId=A1", "does not exist")):
        answer = Client().get(entry(study, query))
        assert answer.status_code == 400 and words in answer.content.decode(), query
    assert Participant.objects.count() == 3


def test_a_channel_without_an_id_parameter_assigns_one_and_the_session_brings_them_back(client, study):
    client.get(entry(study, "channel=list"))
    first = Participant.objects.get()
    assert first.prolific_pid.startswith("list-") and len(first.prolific_pid) == 5 + 24
    assert client.get(entry(study, "channel=list")).status_code == 302  # reopening the link resumes
    assert Participant.objects.count() == 1
    Client().get(entry(study, "channel=list"))  # someone else
    assert Participant.objects.count() == 2


def test_the_completion_redirect_is_the_channels_with_its_code_and_id(client, study):
    client.get(entry(study, "channel=sona&id=abc123"))
    participant = Participant.objects.get()
    answer_all(participant)
    participant.refresh_from_db()
    page = done_page(client, study)
    target = SONA_DONE.format(id="abc123", code=participant.completion_code).replace("&", "&amp;")
    assert f'content="2;url={target}"' in page and f'href="{target}"' in page
    assert "Taking you back to sona" in page and "Prolific" not in page
    other = Client()
    other.get(entry(study, "channel=list"))
    answer_all(Participant.objects.get(channel__name="list"))
    page = done_page(other, study)
    assert "http-equiv" not in page and "prolific-link" not in page and 'id="completion-code"' in page


def test_the_channel_is_in_the_exports_and_the_report(client, study, admin_client):
    client.get(entry(study, "channel=sona&id=abc123"))
    answer_all(Participant.objects.get())
    prolific = flow.enter(study, {"PROLIFIC_PID": PID})
    answer_all(prolific)
    flow.enter(study, {"channel": "list"})
    out = io.StringIO()
    export_study(study, "csv", out)
    df = read_csv(io.StringIO(out.getvalue()))
    humans = df[df["respondent_type"] == "human"]
    assert humans.groupby("channel").size().to_dict() == {"prolific": 30, "sona": 30}
    assert df[df["respondent_type"] == "model"]["channel"].isna().all()
    raw = {row[RAW_COLUMNS.index("prolific_pid")]: row[RAW_COLUMNS.index("channel")] for row in raw_rows(study)}
    assert raw == {PID: "prolific", "sona-abc123": "sona"}
    counts = participation(study)
    assert counts["channels"] == {"list": {"entered": 1, "completed": 0}, "prolific": {"entered": 1, "completed": 1},
                                  "sona": {"entered": 1, "completed": 1}}
    line = "by channel: list 0 completed of 1, prolific 1 completed of 1, sona 1 completed of 1"
    assert line in summary_line(counts)
    report = admin_client.get(reverse("admin:analysis_studyanalysis_report", args=[study.pk])).content.decode()
    assert line in report


def test_a_prolific_only_study_reports_as_before(study):
    RecruitmentChannel.objects.all().delete()
    answer_all(flow.enter(study, {"PROLIFIC_PID": PID}))
    assert "by channel" not in summary_line(participation(study))


def test_the_admin_shows_each_channels_link_and_refuses_bad_settings(admin_client, study, settings):
    settings.SITE_URL = "https://lab.example.org"
    page = admin_client.get(reverse("admin:surveys_study_change", args=[study.pk])).content.decode()
    assert "https://lab.example.org/s/nv/?channel=sona&amp;id=&lt;their id&gt;" in page
    assert "https://lab.example.org/s/nv/?channel=list<" in page
    assert "Recruitment channels besides Prolific" in page and "Prolifics" not in page
    for fields, field in (({"name": "prolific"}, "name"), ({"name": "x", "completion_url": "https://a/{oops}"},
                                                            "completion_url"),
                          ({"name": "y", "id_param": "a b"}, "id_param")):
        with pytest.raises(ValidationError) as caught:
            RecruitmentChannel(study=study, **fields).full_clean()
        assert field in caught.value.message_dict


def test_the_participants_api_names_the_channel(admin_client, study):
    flow.enter(study, {"channel": "sona", "id": "abc123"})
    flow.enter(study, {"PROLIFIC_PID": PID})
    rows = admin_client.get("/api/participants/?study=nv").json()["results"]
    assert sorted((r["prolific_pid"], r["channel"]) for r in rows) == [(PID, None), ("sona-abc123", "sona")]


def test_a_channel_participant_who_declines_or_has_ended_is_not_told_about_prolific(client, study):
    client.get(entry(study, "channel=sona&id=abc123"))
    declined = client.post(reverse("surveys:consent", kwargs={"slug": study.slug}), {"choice": "decline"})
    assert "You may close this page" in declined.content.decode() and "Prolific" not in declined.content.decode()
    participant = Participant.objects.get()
    flow.mark_participants(Participant.objects.filter(pk=participant.pk), Participant.Status.SCREENED_OUT)
    ended = client.get(reverse("surveys:done", kwargs={"slug": study.slug})).content.decode()
    assert "please contact the researchers" in ended and "Prolific" not in ended
    prolific_client = Client()  # Prolific's participants keep their wording
    prolific_client.get(entry(study, f"PROLIFIC_PID={PID}"))
    page = prolific_client.post(reverse("surveys:consent", kwargs={"slug": study.slug}), {"choice": "decline"})
    assert "Please return the study on Prolific" in page.content.decode()


def test_the_consent_page_names_prolific_only_to_prolifics_participants(client, study):
    client.get(entry(study, "channel=sona&id=abc123"))
    consent = client.get(reverse("surveys:consent", kwargs={"slug": study.slug})).content.decode()
    assert "You may stop at any time by closing this page." in consent and "Prolific" not in consent
    prolific_client = Client()  # Prolific's participants keep their wording, word for word
    prolific_client.get(entry(study, f"PROLIFIC_PID={PID}"))
    page = prolific_client.get(reverse("surveys:consent", kwargs={"slug": study.slug})).content.decode()
    assert "You may stop at any time by returning the study on Prolific." in page


def _withdraw(study: Study, pid: str) -> None:
    from surveys.withdrawal import respondent_id

    Withdrawal.objects.create(study=study, study_slug=study.slug, respondent_id=respondent_id(pid),
                              requested_by="test", participant_status="started")


# Every page that refuses someone before they are admitted, as (how to provoke it, query for SONA's participant,
# query for Prolific's, the title shown).
REFUSALS = [
    ("draft", "channel=sona&id=abc123", f"PROLIFIC_PID={PID}", "This study has not started yet"),
    ("closed", "channel=sona&id=abc123", f"PROLIFIC_PID={PID}", "This study is closed"),
    ("no items", "channel=sona&id=abc123", f"PROLIFIC_PID={PID}", "This study is not ready"),
    ("entry limit", "channel=sona&id=abc124", "PROLIFIC_PID=ABC124", "Too many new participants"),
    ("withdrawn", "channel=sona&id=abc123", f"PROLIFIC_PID={PID}", "You have withdrawn from this study"),
    ("no study", "channel=sona&id=abc123", f"PROLIFIC_PID={PID}", "No study at this address"),
]


@pytest.mark.parametrize("case, sona_query, prolific_query, title", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals_before_admission_name_prolific_only_to_prolifics_participants(study, settings, case, sona_query,
                                                                                prolific_query, title):
    slug = study.slug
    if case in ("draft", "closed"):
        study.status = Study.Status.DRAFT if case == "draft" else Study.Status.CLOSED
        study.save()
    elif case == "no items":
        study.items.all().delete()
    elif case == "entry limit":
        settings.ENTRY_MAX_PER_CLIENT = 1
        Client(REMOTE_ADDR="203.0.113.7").get(entry(study, "channel=sona&id=first"))
    elif case == "withdrawn":
        _withdraw(study, "sona-abc123")
        _withdraw(study, PID)
    elif case == "no study":
        slug = "no-such-study"
    sona = Client(REMOTE_ADDR="203.0.113.7").get(f"/s/{slug}/?{sona_query}")
    page = sona.content.decode()
    assert sona.status_code >= 400 and title in page and "Prolific" not in page, page
    prolific = Client(REMOTE_ADDR="203.0.113.7").get(f"/s/{slug}/?{prolific_query}")
    assert prolific.status_code == sona.status_code and title in prolific.content.decode()
    assert "Prolific" in prolific.content.decode()  # Prolific's participants keep their wording
    assert not Participant.objects.filter(prolific_pid__in=["sona-abc123", "sona-abc124", PID, "ABC124"]).exists()


@pytest.mark.parametrize("query", ["channel=sona", "channel=sona&id=bad%20id", "channel=nosuch&id=1"])
def test_a_bad_channel_link_is_refused_without_naming_prolific(client, study, query):
    response = client.get(entry(study, query))
    page = response.content.decode()
    assert response.status_code == 400 and "This link" in page and "Prolific" not in page
    assert not Participant.objects.exists()


def test_a_lost_place_names_prolific_only_for_a_study_without_other_channels(client, study):
    consent = reverse("surveys:consent", kwargs={"slug": study.slug})
    page = client.get(consent).content.decode()  # no session: who this is, nobody knows
    assert "We could not find your place" in page and "Prolific" not in page
    RecruitmentChannel.objects.filter(study=study).delete()
    assert "the link on Prolific" in client.get(consent).content.decode()


def test_a_channel_test_participant_is_not_told_about_prolific(client, study):
    participant = Participant.objects.create(study=study, prolific_pid="sona-t1", channel=study.channels.get(
        name="sona"), is_test=True)
    session = client.session
    session[f"hedgelab.participant.{study.pk}"] = participant.pk
    session.save()
    consent = client.get(reverse("surveys:consent", kwargs={"slug": study.slug})).content.decode()
    assert "Test participant" in consent and "Prolific" not in consent
    answer_all(participant)
    done = client.get(reverse("surveys:done", kwargs={"slug": study.slug})).content.decode()
    assert "This was a test: you are not sent back to sona." in done and "Prolific" not in done


def test_a_channel_participant_who_returned_is_not_told_prolific_says_so(client, study):
    client.get(entry(study, "channel=sona&id=abc123"))
    flow.mark_participants(Participant.objects.all(), Participant.Status.RETURNED)
    ended = client.get(reverse("surveys:done", kwargs={"slug": study.slug})).content.decode()
    assert "You returned this study" in ended and "Prolific" not in ended


def test_a_channel_with_a_return_address_links_back_to_it_from_every_page_that_ends_a_visit(client, study):
    """Declined, ended and refused: "Back to sona" with the channel's return_url; a channel without one (list)
    and Prolific's participants keep their pages."""
    RecruitmentChannel.objects.filter(name="sona").update(return_url="https://lab.sona-systems.com/all_exp.aspx")
    back = 'href="https://lab.sona-systems.com/all_exp.aspx" id="channel-return-link">Back to sona</a>'
    client.get(entry(study, "channel=sona&id=abc123"))
    declined = client.post(reverse("surveys:consent", kwargs={"slug": study.slug}), {"choice": "decline"})
    assert back in declined.content.decode() and "You may close this page" not in declined.content.decode()
    flow.mark_participants(Participant.objects.all(), Participant.Status.RETURNED)
    assert back in client.get(reverse("surveys:done", kwargs={"slug": study.slug})).content.decode()
    refused = Client().get(entry(study, "channel=sona"))  # no id: refused before admission
    assert refused.status_code == 400 and back in refused.content.decode()
    other = Client()
    other.get(entry(study, "channel=list"))
    page = other.post(reverse("surveys:consent", kwargs={"slug": study.slug}), {"choice": "decline"}).content.decode()
    assert "You may close this page" in page and "channel-return-link" not in page
    with pytest.raises(ValidationError) as caught:
        RecruitmentChannel(study=study, name="z", return_url="lab.example/studies").full_clean()
    assert "return_url" in caught.value.message_dict


def test_the_participant_list_names_ids_and_the_prolific_channel_for_every_channel(admin_client, study):
    """The list's first column is "participant id" (a channel's ids are not Prolific PIDs), and its channel
    filter offers "prolific" for the participants without a channel, where it read "-"."""
    flow.enter(study, {"channel": "sona", "id": "abc123"})
    flow.enter(study, {"PROLIFIC_PID": PID})
    page = admin_client.get(reverse("admin:surveys_participant_changelist")).content.decode()
    assert "Participant id" in page and "Prolific pid" not in page
    assert "?channel__isnull=True" in page and ">prolific</a>" in page
    only = admin_client.get(reverse("admin:surveys_participant_changelist") + "?channel__isnull=True")
    assert PID in only.content.decode() and "sona-abc123" not in only.content.decode()


def test_a_completion_url_fills_named_placeholders_only(study):
    """``{code}`` and ``{id}`` are replaced and ``{{``/``}}`` are literal braces; a format spec or attribute access
    (``{code:>300000000}`` once made a 290 MB string in a web worker) is refused when saved and, in a row saved
    before the rule, left as written rather than expanded."""
    from surveys.channels import completion

    channel = RecruitmentChannel.objects.get(study=study, name="sona")
    for bad in ("https://a/{code:>300000000}", "https://a/{code.__class__.__mro__}", "https://a/{id[0]}", "https://a/{"):
        channel.completion_url = bad
        with pytest.raises(ValidationError) as caught:
            channel.full_clean()
        assert "Only the placeholders {code} and {id}" in caught.value.message_dict["completion_url"][0]
    RecruitmentChannel.objects.filter(pk=channel.pk).update(completion_url="https://a/?c={code:>300000000}&x={{y}}&i={id}")
    Participant.objects.create(study=study, prolific_pid="sona-a b", channel=channel)
    participant = Participant.objects.get(prolific_pid="sona-a b")
    assert completion(participant, "C 1").url == "https://a/?c={code:>300000000}&x={y}&i=a%20b"
    RecruitmentChannel.objects.filter(pk=channel.pk).update(completion_url=SONA_DONE)
    assert completion(Participant.objects.get(pk=participant.pk), "C1").url.endswith("survey_code=a%20b&c=C1")
