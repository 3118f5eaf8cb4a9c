"""A study's recruitment channels through the REST API (surveys/api_channels.py): created, read, changed and
deleted with the admin's validation, the model permissions of the admin's channel table, and the study's
ownership (another researcher's study and channels are refused)."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from rest_framework.authtoken.models import Token

from surveys import flow
from surveys.models import Participant, RecruitmentChannel, Study

pytestmark = pytest.mark.django_db

PERMS = [f"surveys.{action}_{model}" for model in ("study", "recruitmentchannel")
         for action in ("view", "add", "change", "delete")]
SONA = "https://lab.sona-systems.com/webstudy_credit.aspx?experiment_id=12&survey_code={id}&c={code}"


def researcher(name: str, perms: list[str] = PERMS) -> User:
    user = User.objects.create_user(name, password="pw", is_staff=True)
    for perm in perms:
        app, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    return User.objects.get(pk=user.pk)


class Api:
    def __init__(self, user: User):
        self.client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")

    def __getattr__(self, method):
        call = getattr(self.client, method)
        return lambda url, data=None: call(url, data, content_type="application/json") if data is not None \
            else call(url)


@pytest.fixture
def world():
    ana, bo = researcher("ana"), researcher("bo")
    mine = Study.objects.create(slug="mine", title="Mine", status=Study.Status.LIVE, owner=ana)
    theirs = Study.objects.create(slug="theirs", title="Theirs", owner=bo)
    their_channel = RecruitmentChannel.objects.create(study=theirs, name="mturk", id_param="workerId")
    return {"api": Api(ana), "mine": mine, "theirs": theirs, "their_channel": their_channel}


def test_a_channel_is_created_read_changed_and_deleted(world):
    api = world["api"]
    created = api.post("/api/channels/", {"study": "mine", "name": "sona", "id_param": "id",
                                          "completion_url": SONA})
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["study"] == "mine" and body["participants"] == 0
    assert body["entry_link"].endswith("/s/mine/?channel=sona&id=<their id>")
    url = f"/api/channels/{body['id']}/"
    assert api.get(url).json()["completion_url"] == SONA and api.get(url).json()["return_url"] == ""
    back = api.patch(url, {"return_url": "https://lab.sona-systems.com/"})
    assert back.status_code == 200 and back.json()["return_url"] == "https://lab.sona-systems.com/"
    assert [c["name"] for c in api.get("/api/channels/?study=mine").json()["results"]] == ["sona"]
    changed = api.patch(url, {"name": "sona2", "id_param": ""})
    assert changed.status_code == 200 and changed.json()["entry_link"].endswith("?channel=sona2")
    assert RecruitmentChannel.objects.get(pk=body["id"]).name == "sona2"
    assert api.delete(url).status_code == 204
    assert not RecruitmentChannel.objects.filter(study=world["mine"]).exists()


@pytest.mark.parametrize("data, field", [
    ({"name": "prolific"}, "name"),
    ({"name": "has space"}, "name"),
    ({"name": "a" * 17}, "name"),
    ({"name": "sona", "id_param": "survey-code"}, "id_param"),
    ({"name": "sona", "id_param": "channel"}, "id_param"),
    ({"name": "sona", "completion_url": "https://x.example/?c={cod}"}, "completion_url"),
    ({"name": "sona", "completion_url": "lab.example/done"}, "completion_url"),
    ({"name": "sona", "completion_url": "https://x.example/?c={code:>300000000}"}, "completion_url"),  # format spec
    ({"name": "sona", "completion_url": "https://x.example/?c={code.__class__.__mro__}"}, "completion_url"),
    ({"name": "sona", "completion_url": "https://x.example/?c={id[0]}"}, "completion_url"),
    ({"name": "sona", "completion_url": "https://x.example/?c={code!r}"}, "completion_url"),
    ({"name": "sona", "completion_url": "https://x.example/?c={}"}, "completion_url"),
    ({"name": "sona", "return_url": "lab.example/studies"}, "return_url"),
    ({"id_param": "id"}, "name"),
])
def test_bad_fields_get_the_apis_field_errors_and_save_nothing(world, data, field):
    answer = world["api"].post("/api/channels/", {"study": "mine", **data})
    assert answer.status_code == 400 and list(answer.json()) == [field], answer.json()
    assert isinstance(answer.json()[field], list) and answer.json()[field][0]
    assert not RecruitmentChannel.objects.filter(study=world["mine"]).exists()


def test_a_name_is_unique_in_its_study_only(world):
    api = world["api"]
    assert api.post("/api/channels/", {"study": "mine", "name": "mturk"}).status_code == 201  # bo's has one
    again = api.post("/api/channels/", {"study": "mine", "name": "mturk"})
    assert again.status_code == 400 and "already has a channel named mturk" in again.json()["name"][0]
    assert RecruitmentChannel.objects.filter(study=world["mine"]).count() == 1


def test_another_researchers_study_and_channels_are_refused(world):
    api, theirs, channel = world["api"], world["theirs"], world["their_channel"]
    refused = api.post("/api/channels/", {"study": "theirs", "name": "sona"})
    assert refused.status_code == 400 and list(refused.json()) == ["study"]
    assert [c["name"] for c in api.get("/api/channels/").json()["results"]] == []
    url = f"/api/channels/{channel.pk}/"
    assert api.get(url).status_code == 404
    assert api.patch(url, {"completion_url": "https://evil.example/{id}"}).status_code == 404
    assert api.delete(url).status_code == 404
    channel.refresh_from_db()
    assert channel.completion_url == "" and RecruitmentChannel.objects.filter(study=theirs).count() == 1
    mine = RecruitmentChannel.objects.create(study=world["mine"], name="list")
    moved = api.patch(f"/api/channels/{mine.pk}/", {"study": "theirs"})
    assert moved.status_code == 400 and list(moved.json()) == ["study"]  # not offered: "does not exist"


def test_a_channel_stays_in_its_study(world):
    other = Study.objects.create(slug="other", title="Other", owner=world["mine"].owner)
    channel = RecruitmentChannel.objects.create(study=world["mine"], name="list")
    moved = world["api"].patch(f"/api/channels/{channel.pk}/", {"study": other.slug})
    assert moved.status_code == 400 and "stays in its study" in moved.json()["study"][0]
    assert RecruitmentChannel.objects.get(pk=channel.pk).study_id == world["mine"].pk


def test_a_channel_someone_came_through_keeps_its_name_and_is_not_deleted(world, imported_nv):
    imported_nv.owner = world["mine"].owner
    imported_nv.status = Study.Status.LIVE
    imported_nv.save()
    channel = RecruitmentChannel.objects.create(study=imported_nv, name="sona", id_param="id")
    flow.enter(imported_nv, {"channel": "sona", "id": "abc123"})
    api, url = world["api"], f"/api/channels/{channel.pk}/"
    assert api.get(url).json()["participants"] == 1
    renamed = api.patch(url, {"name": "sona2"})
    assert renamed.status_code == 400 and "is fixed" in renamed.json()["name"][0]
    assert api.patch(url, {"completion_url": SONA}).status_code == 200  # the rest may change
    deleted = api.delete(url)
    assert deleted.status_code == 409 and "1 participant(s)" in deleted.json()["detail"]
    assert Participant.objects.get().channel == RecruitmentChannel.objects.get(pk=channel.pk)


@pytest.mark.parametrize("method, perm", [("get", "view"), ("post", "add"), ("patch", "change"),
                                          ("delete", "delete")])
def test_each_action_needs_its_model_permission(world, method, perm):
    channel = RecruitmentChannel.objects.create(study=world["mine"], name="list")
    url = "/api/channels/" if method == "post" else f"/api/channels/{channel.pk}/"
    data = {"study": "mine", "name": "sona"} if method in ("post", "patch") else None
    without = researcher("carla", [p for p in PERMS if p != f"surveys.{perm}_recruitmentchannel"])
    world["mine"].shared_with.add(without)
    assert getattr(Api(without), method)(url, data).status_code == 403
    holder = researcher("dora", PERMS)
    world["mine"].shared_with.add(holder)
    assert getattr(Api(holder), method)(url, data).status_code in (200, 201, 204)
