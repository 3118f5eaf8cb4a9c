"""The scale's radio buttons built by ``{% scale_options %}`` (surveys/templatetags/answer_widgets.py) are the
markup the template loop wrote before (kept here as the reference): same inputs, values, ids, labels, checked
option and escaping, for whole and decimal scales and every kind of selected value."""
from __future__ import annotations

import re

import pytest
from django.template import engines

LOOP = engines["django"].from_string(
    '{% for option in q.options %}{% with v=option|stringformat:"s" %}\n'
    '    <span class="sb-option"><input type="radio" name="{{ name }}" data-answer autocomplete="off" '
    'id="{{ prefix }}-{{ v }}" '
    'value="{{ v }}"{% if selected is not None and selected != "" and option == selected %} checked{% endif %}>'
    '<label for="{{ prefix }}-{{ v }}">{{ v }}</label></span>\n    {% endwith %}{% endfor %}')
TAG = engines["django"].from_string("{% load answer_widgets %}{% scale_options q.options name prefix selected %}")


def tags(html: str) -> str:
    return re.sub(r">\s+<", "><", html.strip())


@pytest.mark.parametrize("options", [[i * 5 for i in range(21)], [i * 0.5 for i in range(5)], [1.0, 2.5]])
@pytest.mark.parametrize("selected", [None, "", 50, 0, 0.5, "50", 2.5])
@pytest.mark.parametrize("name,prefix", [("value", "q"), ('a"b', "<x>")])
def test_scale_options_write_what_the_template_loop_wrote(options, selected, name, prefix):
    context = {"q": {"options": options}, "name": name, "prefix": prefix, "selected": selected}
    html = TAG.render(context)
    assert tags(html) == tags(LOOP.render(context))
    assert html.count('type="radio"') == len(options)
    assert html.count(" checked") == (1 if selected not in (None, "") and selected in options else 0)
