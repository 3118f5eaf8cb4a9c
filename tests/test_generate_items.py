"""Studies and their items from the command line: create_study, then generate_items with a published design."""
from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from surveys.models import Item, Study

pytestmark = pytest.mark.django_db


def test_create_study_then_generate_rq2_and_rq1(tmp_path):
    call_command("create_study", "tang-rq2", "--instrument", "wep_choice", "--title", "Tang RQ2", "--live")
    study = Study.objects.get(slug="tang-rq2")
    assert (study.instrument, study.status, study.title) == ("wep_choice", "live", "Tang RQ2")
    call_command("generate_items", "tang-rq2", "--design", "tang-rq2", "--seed", "7")
    assert study.items.count() == 360
    item = study.items.get(key="height|5|narrow|0.050|below_low")
    page = item.kind.page_context(item)
    assert page["sentence"].endswith("_ below 99.") and [o.key for o in page["options"]] == list("ABCDE")
    assert item.kind.parse_model_answer("I think B. is likely to be", item).answer.choice == "B"
    # a second run would duplicate every key: refused, nothing added
    with pytest.raises(CommandError, match="already has 360 of these items"):
        call_command("generate_items", "tang-rq2", "--design", "tang-rq2", "--seed", "7")
    assert study.items.count() == 360

    call_command("create_study", "tang-rq1", "--instrument", "wep_probability")
    call_command("generate_items", "tang-rq1", "--design", "tang-rq1", "--contexts", "CNC,FCNC")
    rq1 = Study.objects.get(slug="tang-rq1")
    assert set(rq1.items.values_list("context", flat=True)) == {"CNC", "FCNC"}
    assert rq1.items.values("expression").distinct().count() == 17


def test_generate_items_refuses_what_does_not_fit():
    call_command("create_study", "sb", "--instrument", "speaker_belief")
    with pytest.raises(CommandError, match="makes wep_choice items, but study 'sb' uses speaker_belief"):
        call_command("generate_items", "sb", "--design", "tang-rq2")
    call_command("create_study", "rq2", "--instrument", "wep_choice")
    with pytest.raises(CommandError, match="takes no option language"):
        call_command("generate_items", "rq2", "--design", "tang-rq2", "--language", "zh")
    with pytest.raises(CommandError, match="no study with slug 'nope'"):
        call_command("generate_items", "nope", "--design", "tang-rq2")
    with pytest.raises(CommandError, match="exists already"):
        call_command("create_study", "rq2", "--instrument", "wep_choice")
    assert Item.objects.count() == 0


def test_a_chinese_study_from_the_command_line():
    call_command("create_study", "tang-zh", "--instrument", "wep_probability", "--language", "zh")
    study = Study.objects.get(slug="tang-zh")
    assert study.language == "zh-hans"
    call_command("generate_items", "tang-zh", "--design", "tang-rq1", "--contexts", "CNC", "--language", "zh")
    item = study.items.first()
    assert item.language == "zh" and "概率" in item.kind.page_context(item)["sentence"]


def test_items_without_expressions_are_drawn_items_per_participant_least_used_first():
    import random

    from surveys.assignment import assign
    from surveys.models import Participant

    call_command("create_study", "rq2", "--instrument", "wep_choice", "--items-per-participant", "30", "--live")
    call_command("generate_items", "rq2", "--design", "tang-rq2")
    study = Study.objects.get(slug="rq2")
    seen: dict[int, int] = {}
    for n in range(12):  # 12 × 30 = 360: every item exactly once
        slots = assign(Participant.objects.create(study=study, prolific_pid=f"P{n}"), random.Random(n))
        assert len(slots) == 30
        for slot in slots:
            seen[slot.item_id] = seen.get(slot.item_id, 0) + 1
    assert len(seen) == 360 and set(seen.values()) == {1}
    study.items_per_participant = None  # empty: every item
    study.save()
    assert len(assign(Participant.objects.create(study=study, prolific_pid="all"), random.Random(0))) == 360


@pytest.mark.parametrize("kind, default", [("wep_choice", 30), ("interval_confidence", 10),
                                           ("verbalisation_choice", 12)])
def test_create_study_gives_each_kind_its_default_items_per_participant_and_prints_it(kind, default):
    out = io.StringIO()
    call_command("create_study", "s1", "--instrument", kind, stdout=out)
    assert Study.objects.get(slug="s1").items_per_participant == default
    assert f"items per participant: {default} (the {kind} default: " in out.getvalue()
    out = io.StringIO()
    call_command("create_study", "s2", "--instrument", kind, "--items-per-participant", "all", stdout=out)
    assert Study.objects.get(slug="s2").items_per_participant is None
    assert "items per participant: all of the study's items" in out.getvalue()
    call_command("create_study", "s3", "--instrument", kind, "--items-per-participant", "7", stdout=io.StringIO())
    assert Study.objects.get(slug="s3").items_per_participant == 7
    with pytest.raises(CommandError, match="items per participant"):
        call_command("create_study", "s4", "--instrument", kind, "--items-per-participant", "0")


def test_create_study_of_a_kind_drawn_by_expression_says_so():
    out = io.StringIO()
    call_command("create_study", "sb", "--instrument", "speaker_belief", stdout=out)
    assert Study.objects.get(slug="sb").items_per_participant is None
    assert "drawn per expression" in out.getvalue()
