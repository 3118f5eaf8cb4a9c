"""Template CSVs of items (issue 23, point 9): one per kind, required columns first in their fixed order, and
each imports as it is into a study of its kind; served by `manage.py item_template KIND` and the admin."""
from __future__ import annotations

import csv
import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from surveys.importers import import_items
from surveys.instruments import get_instrument, instrument_choices
from surveys.item_template import item_template
from surveys.models import Study

pytestmark = pytest.mark.django_db
KINDS = [name for name, _ in instrument_choices() if get_instrument(name).import_columns]  # generic: items from a definition


@pytest.mark.parametrize("kind", KINDS)
def test_each_kinds_template_lists_its_columns_in_order_and_imports_as_it_is(kind):
    text = item_template(kind)
    header, *rows = list(csv.reader(io.StringIO(text)))
    instrument = get_instrument(kind)
    assert tuple(header[:len(instrument.import_columns)]) == instrument.import_columns
    assert set(header[len(instrument.import_columns):]) == set(instrument.optional_columns)
    assert len(rows) == 2 and all(len(r) == len(header) for r in rows)
    study = Study.objects.create(slug=f"t-{kind}".replace("_", "-"), title=kind, instrument=kind)
    result = import_items(study, io.BytesIO(text.encode()))
    assert result.created >= 2 and study.main_items().count() == result.created


def test_the_command_prints_or_writes_the_template(tmp_path, capsys):
    call_command("item_template", "interval_confidence")
    assert capsys.readouterr().out == item_template("interval_confidence")
    target = tmp_path / "t.csv"
    call_command("item_template", "wep_choice", "--output", str(target))
    assert target.read_text(encoding="utf-8") == item_template("wep_choice")
    with pytest.raises(CommandError, match="exists"):
        call_command("item_template", "wep_choice", "--output", str(target))
    with pytest.raises(CommandError, match="invalid choice"):
        call_command("item_template", "no_such_kind")


def test_the_admin_import_page_links_the_template_of_the_studys_kind(admin_client):
    study = Study.objects.create(slug="tpl", title="Tpl", instrument="verbalisation_choice")
    page = admin_client.get(reverse("admin:surveys_study_import_items", args=[study.pk])).content.decode()
    url = reverse("admin:surveys_study_item_template", args=[study.pk])
    assert f'href="{url}"' in page and "<code>premise</code>, <code>hypothesis</code>, <code>p</code>" in page
    download = admin_client.get(url)
    assert download.status_code == 200 and download["Content-Type"].startswith("text/csv")
    assert 'filename="verbalisation_choice-items-template.csv"' in download["Content-Disposition"]
    assert download.content.decode() == item_template("verbalisation_choice")


def test_the_documentation_lists_each_kinds_required_columns_in_the_same_order():
    """docs/tutorials/own-study.md's table of kinds: the required columns (before "optional") in the order of
    the kind's import_columns, which the template, the import page and the error messages use."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "tutorials" / "own-study.md").read_text(encoding="utf-8")
    for kind in KINDS:
        row = next(line for line in page.splitlines() if line.startswith("|") and f"| `{kind}` |" in line)
        required = row.split(f"| `{kind}` |", 1)[1].split("optional", 1)[0]
        assert tuple(re.findall(r"`([a-z][a-z_]*)`", required)) == get_instrument(kind).import_columns, kind
