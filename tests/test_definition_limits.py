"""What a definition may ask of the server (issue 30, points 3 and 8): templates bounded in what they compute
(surveys/definition/template_limits.py), definitions uploaded over the web checked in a limited child process
first (template_check.py), and the inputs that answered HTTP 500 answered 400 naming the field."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from rest_framework.test import APIClient

from surveys.definition import template_check
from surveys.definition.templates import TemplateProblem, render
from surveys.models import Study

pytestmark = pytest.mark.django_db
SLIDER = Path(__file__).resolve().parents[1] / "studies" / "examples" / "chance-slider"
HEAVY = [  # each once froze or ballooned a worker; refused before it computes
    "{{ 9**(9**7) }}", "{{ 9**(9**8) }}", "{{ 2**(10**6) }}", "{{ 1.5**400000 }}", "{{ 'x' * 10**9 }}",
    "{{ [1] * 10**9 }}", "{{ 'x'|center(10**9) }}", "{{ 'x'|indent(10**9) }}", "{{ 'x'.ljust(10**9) }}",
    "{{ '%999999999d' % 1 }}", "{{ '%999999999d'|format(1) }}", "{{ '{:>999999999}'.format(1) }}",
    "{{ '{:>{}}'.format(1, 10**9) }}", "{{ range(10**7)|list }}",
    "{% for a in range(10000) %}{% for b in range(10000) %}x{% endfor %}{% endfor %}",
    "{% set ns = namespace(x='ab') %}{% for i in range(40) %}{% set ns.x = ns.x ~ ns.x %}{% endfor %}",
    "{{ 'ab'|replace('', 'x' * 1000)|replace('', 'y' * 1000) }}",
    "{% for i in range(9000) %}{{ 'x' * 100 }}{% endfor %}",  # 900,000 characters of output
]


@pytest.mark.parametrize("template", HEAVY)
def test_a_template_that_computes_too_much_is_refused(template):
    with pytest.raises(TemplateProblem) as caught:
        render(template, {})
    assert caught.value.limit, str(caught.value)


def test_a_power_is_never_folded_while_the_template_compiles():
    """Jinja folds constant expressions when it compiles a template: the intercepted operators are not folded,
    so compiling the review's template computes nothing and rendering it is refused."""
    from surveys.definition.templates import ENV

    source = ENV.compile("{{ 9**(9**7) }}", raw=True)
    assert "call_binop" in source and "4782969" not in source


def test_ordinary_templates_render_as_before():
    assert render("{{ 2**10 }} {{ 'a' ~ b }} {% for x in xs %}{{ loop.index }}/{{ loop.length }} {% endfor %}"
                  "{{ '%5.1f' % 3.14159 }} {{ '{:>4}'.format(7) }} {{ xs|map('string')|join(', ') }}",
                  {"b": "c", "xs": [1, 2]}) == "1024 ac 1/2 2/2   3.1    7 1, 2"


@pytest.mark.parametrize("template", ["{{ 1/0 }}", "{{ 'a' + 1 }}", "{{ int_value|int + 'x' }}",
                                      "{{ " + "(" * 3000 + "1" + ")" * 3000 + " }}"])
def test_other_errors_of_a_template_are_template_problems(template):
    with pytest.raises(TemplateProblem):
        render(template, {"int_value": 3})


def researcher(*codenames: str) -> APIClient:
    user = User.objects.create_user("res", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    api = APIClient()
    api.force_authenticate(User.objects.get(pk=user.pk))
    return api


def slider(**replace: str) -> str:
    text = (SLIDER / "study.toml").read_text(encoding="utf-8")
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    return text


def post_definition(api: APIClient, text: str, route: str = "/api/studies/definition/", **extra):
    return api.post(route, {"definition": text, "files": {"items.csv": (SLIDER / "items.csv").read_text()}, **extra},
                    format="json")


def test_the_web_path_refuses_a_heavy_template_naming_its_key():
    api = researcher("add_study", "change_study", "add_item", "view_study")
    answer = post_definition(api, slider(**{"“{{ sentence }}”": "{{ 9**(9**7) }}"}))
    assert answer.status_code == 400, answer.content
    [problem] = answer.json()["problems"]
    assert problem["where"] == "page.sentence" and "4096 bits" in problem["message"]
    assert not Study.objects.exists()
    assert post_definition(api, slider()).status_code == 201  # the same file without it loads


def test_the_web_path_checks_in_a_limited_child_process(settings, monkeypatch):
    """Within every per-render limit, but too much CPU over all items for the child's limit (1 s here): the
    upload is refused with the limit named, and the web worker rendered nothing."""
    settings.DEFINITION_CHECK_CPU_SECONDS = 1
    rendered = []
    monkeypatch.setattr("surveys.definition.loader._render_first", lambda *a: rendered.append(a))
    heavy = ("{% for a in range(300) %}{% for b in range(300) %}{% if (a * b + a) is divisibleby 7 %}{% endif %}"
             "{% endfor %}{% endfor %}{{ sentence }}")
    api = researcher("add_study", "change_study", "add_item", "view_study")
    answer = post_definition(api, slider(**{"“{{ sentence }}”": heavy}) + "\n" * 0)
    assert answer.status_code == 400, answer.content
    assert "DEFINITION_CHECK_CPU_SECONDS" in answer.json()["problems"][0]["message"]
    assert rendered == [] and not Study.objects.exists()


def test_post_studies_with_a_definition_needs_the_add_item_permission():
    api = researcher("add_study", "change_study", "view_study")  # no add_item
    assert post_definition(api, slider(), route="/api/studies/definition/").status_code == 403
    assert post_definition(api, slider(), route="/api/studies/").status_code == 403
    assert not Study.objects.exists()


@pytest.mark.parametrize("case", ["nested toml", "report_options null", "slug list", "nul in shared_with",
                                  "generic without answer", "jinja error"])
def test_inputs_that_answered_500_get_a_400_naming_the_field(case):
    api = researcher("add_study", "change_study", "add_item", "view_study")
    if case == "nested toml":
        answer = post_definition(api, slider() + "\n[design.options]\ndeep = " + "[" * 5000 + "]" * 5000 + "\n")
        field = answer.json()["problems"][0]["file"]
    elif case == "report_options null":
        answer = api.post("/api/studies/", {"slug": "x", "title": "X", "report_options": None}, format="json")
        field = "report_options"
        Study.objects.create(slug="y", title="Y", owner=User.objects.get(username="res"))
        again = api.patch("/api/studies/y/", {"report_options": None}, format="json")
        assert again.status_code == 400 and "report_options" in again.json()
        Study.objects.filter(slug="y").delete()
    elif case == "slug list":
        answer = post_definition(api, slider(), route="/api/studies/", slug=["a", "b"])
        field = answer.json()["problems"][0]["file"]
    elif case == "nul in shared_with":
        answer = api.post("/api/studies/", {"slug": "x", "title": "X", "shared_with": ["a\x00b"]}, format="json")
        field = "shared_with"
    elif case == "generic without answer":
        answer = api.post("/api/studies/", {"slug": "x", "title": "X", "instrument": "generic"}, format="json")
        field = next(iter(answer.json()))
    else:
        answer = post_definition(api, slider(**{"“{{ sentence }}”": "{{ sentence + 1 }}"}))
        field = answer.json()["problems"][0]["where"]
    assert answer.status_code == 400, (case, answer.status_code, answer.content[:300])
    expected = {"nested toml": "study.toml", "slug list": "slug", "generic without answer": "instrument",
                "jinja error": "page"}.get(case, field)
    assert field == expected or field.startswith(expected), (case, answer.json())
    if case in ("report_options null", "nul in shared_with"):
        assert field in answer.json()
    assert not Study.objects.exists()


def test_the_admin_upload_refuses_a_heavy_template_on_its_page(admin_client):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    text = slider(**{"“{{ sentence }}”": "{{ 'x' * 10**9 }}"})
    answer = admin_client.post(reverse("admin:surveys_study_load_definition"), {
        "definition": SimpleUploadedFile("study.toml", text.encode()),
        "item_files": [SimpleUploadedFile("items.csv", (SLIDER / "items.csv").read_bytes())]})
    page = answer.content.decode()
    shown = page[page.find("definition-problems"):][:1500]
    assert answer.status_code == 422 and "page.sentence" in shown and "200,000" in shown, shown
    assert not Study.objects.exists()
