"""The access matrix: every URL pattern of the project × every role, read with GET, classified.

    .venv/bin/python bench/access_matrix.py [--sqlite] [--all]
    make access-matrix

Enumerates EVERY URL pattern (django.urls resolver: the admin's changelists, change/add/delete/history pages and
custom views, every /api/ route, action and format suffix, the participant pages, reports and exports, /healthz,
the API schema and docs), fills its path arguments with the ids of a seeded world (two researchers' studies with
participants whose PROLIFIC_PIDs carry a known marker, items, answers, endpoints, runs, model answers, Prolific
links and submissions, API tokens; secrets in the environment: OPENAI_API_KEY, the Prolific token, SECRET_KEY,
the database password), GETs each URL as each role and classifies the answer:

    -  denied (redirect to the login page, 401, 403, 404, 405, 429)
    .  shown without the study's data
    s  shown (the study's data, no raw PIDs)
    P  shows raw PROLIFIC_PIDs the role may see (superuser, or *view participant* on a study they may see)
    P! shows raw PROLIFIC_PIDs the role may NOT see          (a leak)
    D! shows data of a study the role may not see (not the owner, not shared with them), outside the
       participant pages                                      (a leak)
    K! shows a secret (API key, token, SECRET_KEY, password)  (a leak)
    5  5xx                                                    (a fault)

Its last row is a write: each role loads a definition naming alpha in ``[study] reference`` (a study of their own
scored against another owner's; ``D!`` if a role that may not see alpha gets one, and the new study's report is
classified too). It also compares the study data before and after the GETs (rows, participants' attention decisions, run and
submission statuses): a read never writes. A route it cannot fill is listed as skipped with the reason. It
prints the matrix (``--all``: every row; by default the rows where a role sees PIDs, a leak or a 5xx, and the
skipped ones) and a summary line, and exits non-zero on any leak, 5xx or write. By default on a private
PostgreSQL and Redis (tests/private_services.py: started here, removed afterwards; DEBUG off as in
production); ``--sqlite`` for a quick run on a temporary SQLite file.
The core (``seed_world``, ``routes``, ``run_matrix``) also runs in tests/test_access_matrix_script.py.
"""
from __future__ import annotations

import argparse
import logging
import os
import random
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

ROLES = ("anonymous", "owner", "shared", "assistant", "other", "report", "super")
SECRET_MARK = "SECRETMARKER"
SECRET_ENV = {"OPENAI_API_KEY": f"sk-{SECRET_MARK}-openai", "PROLIFIC_API_TOKEN": f"{SECRET_MARK}-prolific"}
PID_MARK = {"alpha": "ALPHAPID", "beta": "BETAPID"}  # every PROLIFIC_PID of a study starts with its marker
DATA_MARK = {"alpha": "ALPHAMARK", "beta": "BETAMARK"}  # in titles, run names, model names
PUBLIC = "/s/"  # the participant pages: a live study's title and questions are for everyone who has its link
DENIED_STATUSES = {301, 302, 303, 401, 403, 404, 405, 429}
RESEARCHER = [f"{app}.{action}_{model}" for app, model in
              [("surveys", "study"), ("surveys", "item"), ("surveys", "participant"), ("surveys", "response"),
               ("surveys", "withdrawal"), ("surveys", "recruitmentchannel"), ("elicitation", "modelendpoint"),
               ("elicitation", "elicitationrun"), ("elicitation", "modelresponse"), ("elicitation", "storedprompt"), ("prolific", "prolificstudy"),
               ("prolific", "submission"), ("authtoken", "tokenproxy")]
              for action in ("view", "add", "change", "delete")] + ["analysis.view_studyanalysis"]
#: An assistant: everything a researcher has except participants (so no raw PIDs), alpha shared with them.
ASSISTANT = [p for p in RESEARCHER if not p.startswith("surveys.") or "_participant" not in p]


@dataclass
class World:
    """The seeded objects: users by role, and the primary key of one alpha object per model ("app.model")."""

    users: dict = field(default_factory=dict)
    objects: dict[str, object] = field(default_factory=dict)
    studies: dict[str, object] = field(default_factory=dict)  # "alpha"/"beta" → Study
    secrets: list[str] = field(default_factory=list)


# --- the world ---------------------------------------------------------------------------------------------
def _user(name: str, perms: list[str], **flags):
    from django.contrib.auth.models import Permission, User

    user = User.objects.create_user(name, password=f"pw-{name}", is_staff=True, **flags)
    for perm in perms:
        app, codename = perm.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    return User.objects.get(pk=user.pk)


def _study(slug: str, owner, belem_dir: Path, participants: int):
    """A Belem study: items, ``participants`` attentive ones and one contrarian (excluded by the attention
    filter, so that the report's attention table lists a PID), a completed run, a Prolific link, submissions."""
    from test_analysis_factories import add_run, attentive, contrarian, model_value

    from elicitation.models import ModelEndpoint
    from prolific.models import ProlificStudy, Submission
    from surveys.importers import import_items
    from surveys.models import Study

    name = slug.split("-")[0]
    study = Study.objects.create(slug=slug, title=f"{DATA_MARK[name]} study", status=Study.Status.LIVE, owner=owner)
    import_items(study, belem_dir / "non-verifiable.csv")
    rng = random.Random(7)
    people = [attentive(study, f"{PID_MARK[name]}{n:016d}", rng) for n in range(participants)]
    people.append(contrarian(study, f"{PID_MARK[name]}{99:016d}", rng))
    ModelEndpoint.objects.create(name=f"{name}-ep", base_url="http://127.0.0.1:9/v1", model=f"{DATA_MARK[name]}-model",
                                 api_key_env="OPENAI_API_KEY", owner=owner)
    run = add_run(study, f"{name}-ep", [(item, model_value(item)) for item in study.main_items()[:20]])
    run.name = f"{DATA_MARK[name]} run"
    run.save(update_fields=["name"])
    link = ProlificStudy.objects.create(study=study, prolific_id=f"{name}-prolific")
    for n, person in enumerate(people[:3]):
        Submission.objects.create(prolific_study=link, submission_id=f"{name}-sub-{n}", participant=person,
                                  participant_pid=person.prolific_pid, status="AWAITING REVIEW")
    return study, run


def seed_world(belem_dir: Path, participants: int = 6) -> World:
    """Users of every role, two researchers' studies (alpha: owner's, shared with shared, assistant and report;
    beta: other's), one object of every model the admin lists, an API token per user."""
    from axes.models import AccessAttempt, AccessFailureLog, AccessLog
    from django.conf import settings
    from django.contrib.auth.models import Group, User
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from surveys.respondent_ids import hashed_id
    from elicitation.models import ModelResponse, StoredPrompt
    from prolific.models import ProlificStudy, Submission
    from surveys.models import RecruitmentChannel, Response, Withdrawal

    w = World()
    w.users = {"owner": _user("owner", RESEARCHER), "shared": _user("shared", RESEARCHER),
               "assistant": _user("assistant", ASSISTANT), "other": _user("other", RESEARCHER),
               "report": _user("report", ["analysis.view_studyanalysis"]),
               "super": User.objects.create_superuser("super", "s@example.org", "pw-super")}
    alpha, run = _study("alpha", w.users["owner"], belem_dir, participants)
    beta, _ = _study("beta", w.users["other"], belem_dir, max(2, participants // 2))
    alpha.shared_with.add(w.users["shared"], w.users["assistant"], w.users["report"])
    run.endpoint.shared_with.add(w.users["shared"], w.users["assistant"])
    w.studies = {"alpha": alpha, "beta": beta}
    response = Response.objects.filter(item__study=alpha).select_related("participant", "item").first()
    model_response = ModelResponse.objects.filter(run=run).first()
    prompt = StoredPrompt.objects.create(sha256="a" * 64, api_style="chat",
                                         content=[{"role": "user", "content": response.item.statement}])
    model_response.prompt = prompt
    model_response.save(update_fields=["prompt"])
    withdrawal = Withdrawal.objects.create(study=alpha, study_slug="alpha", respondent_id=hashed_id("withdrawn"),
                                           reason="withdrawn", requested_by="owner", participant_status="completed")
    tokens = [Token.objects.create(user=u) for u in w.users.values()]
    now = timezone.now()
    attempt = dict(username="owner", ip_address="192.0.2.1", user_agent="matrix", http_accept="*/*",
                   path_info="/admin/login/")
    w.objects = {
        "auth.group": Group.objects.create(name="matrix-group"), "auth.user": w.users["owner"],
        "axes.accessattempt": AccessAttempt.objects.create(**attempt, attempt_time=now, get_data="",
                                                            post_data="username=owner", failures_since_start=1),
        "axes.accesslog": AccessLog.objects.create(**attempt, attempt_time=now),
        "axes.accessfailurelog": AccessFailureLog.objects.create(**attempt, attempt_time=now, locked_out=False),
        "surveys.study": alpha, "analysis.studyanalysis": alpha, "surveys.item": response.item,
        "surveys.participant": response.participant, "surveys.response": response, "surveys.withdrawal": withdrawal,
        "surveys.recruitmentchannel": RecruitmentChannel.objects.create(study=alpha, name="sona", id_param="id"),
        "elicitation.modelendpoint": run.endpoint, "elicitation.elicitationrun": run,
        "elicitation.modelresponse": model_response, "elicitation.storedprompt": prompt,
        "prolific.prolificstudy": ProlificStudy.objects.get(study=alpha), "prolific.submission": Submission.objects.filter(
            prolific_study__study=alpha).first(),
        "authtoken.tokenproxy": tokens[0],
    }
    database_password = settings.DATABASES["default"].get("PASSWORD") or ""
    w.secrets = sorted({*SECRET_ENV.values(), *(os.environ.get(k, "") for k in SECRET_ENV),
                        os.environ.get(settings.PROLIFIC_TOKEN_ENV, ""), settings.SECRET_KEY, database_password,
                        *(t.key for t in tokens), *User.objects.values_list("password", flat=True)} - {""})
    return w


def may_see_study(world: World, role: str, study: str) -> bool:
    """A superuser, the owner, or a user the study is shared with (access.ownership.visible)."""
    user = world.users.get(role)
    if user is None:
        return False
    from access.ownership import visible
    from surveys.models import Study

    return visible(Study.objects.filter(pk=world.studies[study].pk), user).exists()


def may_see_pids(world: World, role: str, study: str) -> bool:
    """The rule the matrix checks: a superuser, or *view participant* on a study the role may see."""
    user = world.users.get(role)
    return user is not None and (user.is_superuser or (user.has_perm("surveys.view_participant")
                                                       and may_see_study(world, role, study)))


# --- the routes --------------------------------------------------------------------------------------------
@dataclass
class Route:
    pattern: str  # the full pattern, as the resolver lists it
    name: str
    urls: list[str] = field(default_factory=list)
    skipped: str = ""  # why no URL could be built


def _walk(patterns, prefix: str = "", namespace: str = ""):
    from django.urls import URLResolver

    for p in patterns:
        if isinstance(p, URLResolver):
            ns = f"{namespace}:{p.namespace}".strip(":") if p.namespace else namespace
            yield from _walk(p.url_patterns, prefix + str(p.pattern), ns)
        else:
            yield prefix + str(p.pattern), f"{namespace}:{p.name or ''}".strip(":")


API_MODELS = {"study": "surveys.study", "item": "surveys.item", "participant": "surveys.participant",
              "recruitmentchannel": "surveys.recruitmentchannel",
              "response": "surveys.response", "modelendpoint": "elicitation.modelendpoint",
              "elicitationrun": "elicitation.elicitationrun", "modelresponse": "elicitation.modelresponse",
              "prolificstudy": "prolific.prolificstudy", "submission": "prolific.submission"}
ADMIN_MODEL = re.compile(r"^admin/(\w+)/(\w+)/")


def _values(pattern: str, name: str, arg: str, world: World) -> list[str]:
    """The values to put in path argument ``arg`` of ``pattern`` (empty: cannot fill)."""
    from django.contrib.contenttypes.models import ContentType

    from analysis.export_formats import CODEBOOK_FORMATS, FORMATS

    alpha = world.studies["alpha"]
    if arg in ("format",):
        return ["json"]
    if arg == "fmt":
        return list(CODEBOOK_FORMATS if "codebook" in name else FORMATS)
    if arg == "slug":
        return [alpha.slug]
    if arg == "name":
        return [world.objects["elicitation.modelendpoint"].name]
    if arg == "item_id":
        return [str(world.objects["surveys.item"].pk)]
    if arg == "action":
        return ["cancel"]
    if arg == "url":
        return ["no-such-page/"]
    if arg == "id" and name == "admin:auth_user_password_change":
        return [str(world.users["owner"].pk)]
    if arg == "content_type_id":
        return [str(ContentType.objects.get_for_model(alpha).pk)]
    if arg == "object_id" and "admin/r/" in pattern:
        return [str(alpha.pk)]
    if arg in ("object_id", "pk"):
        model = None
        if match := ADMIN_MODEL.match(pattern):
            model = next((k for k in world.objects if k == f"{match[1]}.{match[2]}"), None)
        elif pattern.startswith("api/"):
            model = API_MODELS.get(name.split(":")[-1].rsplit("-", 1)[0])
        obj = world.objects.get(model or "")
        if obj is None:
            return []
        return [str(obj.user_id if model == "authtoken.tokenproxy" else obj.pk)]
    return []


GROUP = re.compile(r"\(\?P<(\w+)>([^)]*)\)|<(?:\w+:)?(\w+)>")


def _build(pattern: str, name: str, world: World) -> tuple[list[str], str]:
    """The URLs for ``pattern`` (one per value of each argument; an alternation gives one per branch)."""
    urls = [pattern]
    for match in GROUP.finditer(pattern):
        arg = match[1] or match[3]
        if match[1] and re.fullmatch(r"\w+(\|\w+)+", match[2]):
            values = match[2].split("|")
        elif match[0].startswith("<drf_format_suffix:"):
            values = [".json"]
        else:
            values = _values(pattern, name, arg, world)
        if not values:
            return [], f"no value for path argument {arg!r}"
        urls = [u.replace(match[0], v, 1) for u in urls for v in values]
    clean = [u.replace("^", "").replace("$", "").replace("\\.", ".").replace("/?", "") for u in urls]
    return ["/" + u for u in clean], ""


#: Query strings that change what a route shows: each is read with and without them.
QUERIES = {"api-study-export": "?raw_ids=1", "admin:analysis_studyanalysis_export": "?raw_ids=1"}


def routes(world: World) -> list[Route]:
    """Every URL pattern of the project, with the URLs that fill it (each checked to resolve to the pattern)."""
    from django.urls import Resolver404, get_resolver, resolve

    found = []
    for pattern, name in _walk(get_resolver().url_patterns):
        route = Route(pattern, name)
        urls, why = _build(pattern, name, world)
        urls += [url + QUERIES[name] for url in urls if name in QUERIES]
        for url in urls:
            try:
                resolve(url.split("?")[0])
            except Resolver404:
                why = f"built {url} does not resolve"
                break
        route.urls, route.skipped = ([], why) if why else (urls, "")
        found.append(route)
    return found


# --- reading and classifying -------------------------------------------------------------------------------
def _client(world: World, role: str):
    from django.test import Client
    from rest_framework.authtoken.models import Token

    user = world.users.get(role)
    if user is None:
        return Client(raise_request_exception=False)
    client = Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=user).key}")
    client.force_login(user)
    return client


def _body(response) -> str:
    raw = b"".join(response.streaming_content) if response.streaming else response.content
    return raw.decode(errors="replace")


def classify(world: World, role: str, status: int, body: str, url: str = "") -> str:
    """One cell: ``5``, ``K!``, ``P!``, ``D!``, ``P``, ``-``, ``s`` or ``.`` (see the module docstring)."""
    if status >= 500:
        return "5"
    if any(secret in body for secret in world.secrets) or SECRET_MARK in body:
        return "K!"
    pids = [study for study, mark in PID_MARK.items() if mark in body]
    if any(not may_see_pids(world, role, study) for study in pids):
        return "P!"
    if not url.startswith(PUBLIC) and any(mark in body and not may_see_study(world, role, study)
                                          for study, mark in DATA_MARK.items()):
        return "D!"
    if pids:
        return "P"
    if status in DENIED_STATUSES:
        return "-"
    return "s" if any(mark in body for mark in DATA_MARK.values()) else "."


def _evidence(world: World, body: str) -> str:
    """The text around the first secret or PID marker in ``body``."""
    for needle in (*world.secrets, SECRET_MARK, *PID_MARK.values()):
        if (at := body.find(needle)) >= 0:
            return repr(body[max(0, at - 120):at + len(needle) + 40])
    return repr(body[:200])


FAULTS = ("5", "K!", "P!", "D!")


def data_state() -> dict[str, object]:
    """What a read must never change: the rows of every study-data model, and the decisions kept on them
    (participants' status and attention decision, runs' status, submissions' decision)."""
    from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse, StoredPrompt
    from prolific.models import ProlificStudy, Submission
    from surveys.models import Assignment, Item, Participant, Response, Study, Withdrawal

    models = (Study, Item, Participant, Assignment, Response, Withdrawal, ModelEndpoint, ElicitationRun,
              ModelResponse, StoredPrompt, ProlificStudy, Submission)
    state: dict[str, object] = {m._meta.label: m.objects.count() for m in models}
    state["participant decisions"] = sorted(Participant.objects.values_list("pk", "status", "attention_included"))
    state["run statuses"] = sorted(ElicitationRun.objects.values_list("pk", "status"))
    state["submission decisions"] = sorted(Submission.objects.values_list("pk", "status", "decision"))
    return state


@dataclass
class Matrix:
    rows: list[tuple[str, dict[str, str]]]  # (URL, role → cell)
    skipped: list[Route]
    patterns: int
    notes: dict[str, str] = field(default_factory=dict)  # "URL role" → the first lines of a 5xx or leak
    written: list[str] = field(default_factory=list)  # what the GETs changed (data_state): must stay empty

    def count(self, cell: str) -> int:
        return sum(cells[r] == cell for _, cells in self.rows for r in cells)

    @property
    def failed(self) -> bool:
        return any(self.count(cell) for cell in FAULTS) or bool(self.written)

    def summary(self) -> str:
        filled = self.patterns - len(self.skipped)
        urls = sum(url != REFERENCE_ROW for url, _ in self.rows)
        reference = dict(self.rows).get(REFERENCE_ROW, {})
        loaded = ", ".join(role for role, cell in reference.items() if cell != "-") or "none"
        return (f"access matrix: {self.patterns} URL patterns ({filled} filled, {len(self.skipped)} skipped), "
                f"{urls} URLs × {len(ROLES)} roles = {urls * len(ROLES)} GETs, and a definition naming alpha "
                f"as its reference loaded by each role (loaded by: {loaded}); "
                f"5xx: {self.count('5')}, PID leaks: {self.count('P!')}, secret leaks: {self.count('K!')}, "
                f"other studies' data: {self.count('D!')}, data changed by a GET: {len(self.written)}; "
                f"PIDs shown where allowed: {self.count('P')}, denied: {self.count('-')}")


def run_matrix(world: World) -> Matrix:
    """GET every filled URL as every role (Django's request log silenced: a 5xx's exception is in the notes)."""
    from django.core.signals import got_request_exception

    all_routes = routes(world)
    clients = {role: _client(world, role) for role in ROLES}
    before = data_state()
    rows, notes, raised = [], {}, []

    def remember(sender, request=None, **kwargs) -> None:
        raised.append(repr(sys.exc_info()[1]))

    got_request_exception.connect(remember)
    logging.disable(logging.CRITICAL)
    try:
        for route in all_routes:
            for url in route.urls:
                cells = {}
                for role in ROLES:
                    raised.clear()
                    response = clients[role].get(url)
                    body = _body(response)
                    cells[role] = classify(world, role, response.status_code, body, url)
                    if cells[role] in FAULTS:
                        notes[f"{url} {role}"] = f"{response.status_code} {(raised or [_evidence(world, body)])[-1]}"
                rows.append((url, cells))
    finally:
        logging.disable(logging.NOTSET)
        got_request_exception.disconnect(remember)
    after = data_state()
    written = [name for name in before if before[name] != after[name]]
    rows.append(reference_row(world, clients, notes))  # it writes (a study per role that may): after the GETs
    return Matrix(rows, [r for r in all_routes if r.skipped], len(all_routes), notes, written)


#: A new study scored against alpha (``[study] reference``), loaded by each role: the cross-researcher reference.
REFERENCING = """
[study]
slug = "xref-{role}"
title = "Scored against alpha"
kind = "wep_probability"
reference = "alpha"

[design]
generator = "tang-rq1"
[design.options]
settings = ["CNC"]
"""
REFERENCE_ROW = "POST /api/studies/definition/ naming alpha in [study] reference"


def reference_row(world: World, clients: dict, notes: dict[str, str]) -> tuple[str, dict[str, str]]:
    """Each role loads a definition whose ``[study] reference`` is alpha: ``-`` refused, ``s`` loaded by a role
    that may see alpha, ``D!`` loaded by one that may not (a study of theirs scored against another owner's);
    where it loaded, the new study's report is read and classified as well (the worse cell counts)."""
    from surveys.models import Study

    cells = {}
    for role in ROLES:
        slug = f"xref-{role}"
        answer = clients[role].post("/api/studies/definition/", {"definition": REFERENCING.format(role=role)},
                                    content_type="application/json")
        made = Study.objects.filter(slug=slug, reference_study=world.studies["alpha"]).exists()
        cell = "5" if answer.status_code >= 500 else (("s" if may_see_study(world, role, "alpha") else "D!")
                                                       if made else "-")
        if made:
            report = clients[role].get(f"/api/studies/{slug}/report/")
            seen = classify(world, role, report.status_code, _body(report), f"/api/studies/{slug}/report/")
            cell = seen if seen in FAULTS else cell
        if cell in FAULTS:
            notes[f"{REFERENCE_ROW} {role}"] = f"{answer.status_code} {_body(answer)[:200]!r}"
        cells[role] = cell
    return REFERENCE_ROW, cells


def print_matrix(matrix: Matrix, every_row: bool = False) -> None:
    width = max((len(url) for url, _ in matrix.rows), default=10)
    print(f"{'URL':<{width}}  " + " ".join(f"{r[:9]:>9}" for r in ROLES))
    for url, cells in matrix.rows:
        if every_row or url == REFERENCE_ROW or any(c in (*FAULTS, "P") for c in cells.values()):
            print(f"{url:<{width}}  " + " ".join(f"{cells[r]:>9}" for r in ROLES))
    for route in matrix.skipped:
        print(f"skipped {route.pattern} ({route.name or 'unnamed'}): {route.skipped}")
    for where, what in matrix.notes.items():
        print(f"!! {where}: {what}")
    for name in matrix.written:
        print(f"!! changed by the GETs: {name}")
    print(matrix.summary())


# --- the script --------------------------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sqlite", action="store_true", help="a temporary SQLite file instead of PostgreSQL+Redis")
    parser.add_argument("--all", action="store_true", help="print every row (default: PIDs, leaks, 5xx)")
    parser.add_argument("--participants", type=int, default=6)
    args = parser.parse_args()

    from private_services import PrivatePostgres, PrivateRedis, django_env, manage

    var = Path(tempfile.mkdtemp(prefix="hedgelab-access-"))
    production = {"DEBUG": "0", "SECRET_KEY": f"{SECRET_MARK}-django-secret-key", "ALLOWED_HOSTS": "testserver",
                  "SECURE_SSL_REDIRECT": "0", "SESSION_COOKIE_SECURE": "0", "CSRF_COOKIE_SECURE": "0",
                  "LOG_LEVEL": "CRITICAL", **SECRET_ENV}
    pg = redis = None
    try:
        if args.sqlite:
            env = django_env(f"sqlite:///{var / 'db.sqlite3'}", var, **production)
        else:
            pg, redis = PrivatePostgres().__enter__(), PrivateRedis().__enter__()
            # trust authentication accepts any password: a known one, to look for it in every answer
            url = pg.url().replace("postgres@", f"postgres:{SECRET_MARK}db@")
            env = django_env(url, var, CACHE_URL=redis.url(1), CELERY_BROKER_URL=redis.url(0), **production)
        os.environ.update(env)
        manage(env, "migrate", "--noinput")
        import django

        django.setup()
        world = seed_world(ROOT.parent / "shared" / "data" / "belem2024-stimuli", args.participants)
        matrix = run_matrix(world)
        from django.db import connections

        connections.close_all()
    finally:
        if redis is not None:
            redis.__exit__(None, None, None)
        if pg is not None:
            pg.__exit__(None, None, None)
        shutil.rmtree(var, ignore_errors=True)
    print_matrix(matrix, args.all)
    print(f"database: {'SQLite' if args.sqlite else 'private PostgreSQL'}, cache and broker: "
          f"{'files / SQLite' if args.sqlite else 'private Redis'}; DEBUG=0")
    return 1 if matrix.failed else 0


if __name__ == "__main__":
    sys.exit(main())
