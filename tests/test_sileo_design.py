"""Sileo & Moens: the WEP scale (Tables 2–3), the WEP-Reasoning design (ProbLog vs possible worlds, valid WEP,
distractor distance, independent facts) and ``generate_items --design wep-reasoning``."""
from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import CommandError, call_command

from families.sileo import design as wep_reasoning
from families.sileo.design import enumerate_probability, generate, problog_probability, program
from families.sileo.wep_scale import (WEP_MEDIANS, WEP_TEMPLATES, closest_weps, distractor_weps, verbalise)
from surveys.models import Item, Study

FAGEN = Path(__file__).resolve().parents[2] / "shared" / "data" / "fagen-ulmschneider-2015" / "survey-results.csv"


# --- the WEP scale -----------------------------------------------------------------------------------
@pytest.mark.skipif(not FAGEN.exists(), reason="the Fagen-Ulmschneider survey file is not there")
def test_medians_are_the_survey_medians_plus_kent_anchors():
    survey = pd.read_csv(FAGEN)
    medians = {column.strip('"').lower(): survey[column].median() for column in survey.columns[:17]}
    assert medians == {w: m for w, m in WEP_MEDIANS.items() if w not in ("certain", "impossible")}
    assert (WEP_MEDIANS["certain"], WEP_MEDIANS["impossible"]) == (100, 0)
    assert set(WEP_TEMPLATES) == set(WEP_MEDIANS) and len(WEP_MEDIANS) == 19


def test_closest_weps_by_hand():
    assert closest_weps(0.7) == ["likely", "probably", "probable"]
    assert closest_weps(0.15) == ["we doubt", "unlikely", "little chance", "chances are slight", "improbable"]
    assert closest_weps(0.029) == ["almost no chance"]  # 2.9: 2 is 0.9 away, 5 is 2.1 away
    assert closest_weps(1.0) == ["certain"] and closest_weps(0.0) == ["impossible"]
    assert closest_weps(0.56) == ["better than even"]  # 56: 60 is 4 away, 50 is 6 away


def test_distractors_are_at_least_40_points_away():
    # p = 0.5: 10 and 90 are exactly 40 away (kept); 80 (very good chance) and 25 are not
    assert distractor_weps(0.5) == ["certain", "almost certain", "highly likely", "little chance",
                                    "chances are slight", "improbable", "highly unlikely", "almost no chance",
                                    "impossible"]
    for k in range(0, 1001):  # footnote 2: every p has a distractor
        p = k / 1000
        assert distractor_weps(p)
        assert all(abs(WEP_MEDIANS[w] - 100 * p) >= 40 - 1e-9 for w in distractor_weps(p))


def test_verbalise_uses_table_3():
    assert verbalise("probably", "John went to the kitchen.") == "It is probably the case that John went to the kitchen."
    assert verbalise("about even", "a man takes a picture") == "Chances are about even that a man takes a picture."


# --- exact probabilities ------------------------------------------------------------------------------
def test_problog_by_hand():
    structure = {"round1": [{"id": "f1", "p": 0.7}, {"id": "f2", "p": 0.2}, {"id": "f3", "p": 1.0}],
                 "round2": [{"id": "f4", "p": 0.75, "op": "and", "args": ["f1", "f2"]},
                            {"id": "f5", "p": 0.5, "op": "xor", "args": ["f2", "f3"]}],
                 "composition": {"op": "xor", "args": ["f4", "f5"]}}
    # P(f4) = .7·.2·.75 = .105; P(f5) = P(f2 xor f3)·.5 = .8·.5 = .4; f4 and f5 exclude each other through f2
    # (f4 needs f2, f5 needs ¬f2), so P(f4 xor f5) = .105 + .4 = .505
    assert problog_probability(program(structure)) == pytest.approx(0.505, abs=1e-12)
    assert enumerate_probability(structure) == pytest.approx(0.505, abs=1e-12)
    structure["composition"] = {"op": "or", "args": ["f1", "f2"]}
    assert problog_probability(program(structure)) == pytest.approx(1 - 0.3 * 0.8, abs=1e-12)


@pytest.mark.parametrize("hops", [1, 2])
def test_problog_matches_enumeration_of_possible_worlds(hops):
    items = generate(hops=hops, n=40, seed=7)
    for item in items:
        extra = item["extra"]
        assert extra["p"] == pytest.approx(enumerate_probability(extra), abs=1e-9), extra["program"]
    # the draws reach every operator and a spread of probabilities
    assert {i["extra"]["composition"]["op"] for i in items} == {"and", "or", "xor"}
    assert len({round(i["extra"]["p"], 3) for i in items}) > 15


@pytest.mark.parametrize("hops", [1, 2])
def test_valid_wep_closest_and_distractor_far(hops):
    for item in generate(hops=hops, n=40, seed=3):
        extra = item["extra"]
        p100 = 100 * extra["p"]
        distances = {w: abs(m - p100) for w, m in WEP_MEDIANS.items()}
        assert distances[extra["valid_wep"]] == pytest.approx(min(distances.values()))
        assert distances[extra["distractor_wep"]] >= 40 - 1e-9
        options = dict(extra["options"])
        assert sorted(options) == ["A", "B"]
        assert options[extra["valid_key"]] == verbalise(extra["valid_wep"], extra["hypothesis"])
        other = "B" if extra["valid_key"] == "A" else "A"
        assert options[other] == verbalise(extra["distractor_wep"], extra["hypothesis"])
        assert item["ground_truth"] == extra["p"]


@pytest.mark.parametrize("hops", [1, 2])
def test_facts_share_no_concept(hops):
    for item in generate(hops=hops, n=40, seed=11):
        facts = item["extra"]["round1"] + item["extra"]["round2"]
        assert len(facts) == 3 * hops
        for part in ("subject", "verb", "object"):
            assert len({f[part] for f in facts}) == len(facts)
        if hops == 2:
            assert all(a.startswith("f") and int(a[1:]) <= 3 for r in item["extra"]["round2"] for a in r["args"])
            assert all(int(a[1:]) > 3 for a in item["extra"]["composition"]["args"])
        else:
            assert all(int(a[1:]) <= 3 for a in item["extra"]["composition"]["args"])


def test_order_is_drawn_and_items_reproducible():
    items = generate(hops=1, n=80, seed=5)
    firsts = [i["extra"]["valid_key"] for i in items]
    assert 20 < firsts.count("A") < 60
    assert generate(hops=1, n=80, seed=5) == items
    # item k is the same whatever the batch: --start continues a series
    assert generate(hops=1, n=10, seed=5, start=70) == items[70:]
    assert generate(hops=1, n=3, seed=6)[0]["statement"] != items[0]["statement"]


def test_premise_and_hypothesis_wording():
    item = generate(hops=2, n=1, seed=1)[0]
    extra = item["extra"]
    r1, r2 = extra["round1"], extra["round2"]
    assert item["statement"].startswith(verbalise(r1[0]["wep"], r1[0]["text"]))
    assert f"otherwise it is impossible that {r2[0]['text']}." in item["statement"]
    texts = {f["id"]: f["text"] for f in r1 + r2}
    assert all(texts[a] in extra["hypothesis"] for a in extra["composition"]["args"])


# --- the command --------------------------------------------------------------------------------------
@pytest.fixture
def vstudy(db):
    call_command("create_study", "wr", "--instrument", "verbalisation_choice")
    return Study.objects.get(slug="wr")


def test_generate_items_command(vstudy):
    call_command("generate_items", "wr", "--design", "wep-reasoning", "--hops", "1", "--n", "5", "--seed", "2")
    call_command("generate_items", "wr", "--design", "wep-reasoning", "--hops", "2", "--n", "4", "--seed", "2")
    items = Item.objects.filter(study=vstudy)
    assert items.count() == 9
    assert sorted({i.extra["dataset"] for i in items}) == ["wep-reasoning-1hop", "wep-reasoning-2hops"]
    two = items.get(key="wr2-s2-00003")
    assert two.extra["program"].endswith("query(hypothesis).") and two.ground_truth == two.extra["p"]
    with pytest.raises(CommandError, match="already has 5"):  # all or nothing
        call_command("generate_items", "wr", "--design", "wep-reasoning", "--hops", "1", "--n", "6", "--seed", "2")
    assert Item.objects.filter(study=vstudy).count() == 9
    call_command("generate_items", "wr", "--design", "wep-reasoning", "--hops", "1", "--n", "2", "--seed", "2",
                 "--start", "5")
    assert Item.objects.filter(study=vstudy).count() == 11


def test_generate_items_refusals(vstudy, db):
    with pytest.raises(CommandError, match="--hops 1 or --hops 2"):
        call_command("generate_items", "wr", "--design", "wep-reasoning")
    with pytest.raises(CommandError, match="--n must be"):
        call_command("generate_items", "wr", "--design", "wep-reasoning", "--hops", "1", "--n", "0")
    with pytest.raises(CommandError, match="takes no option"):
        call_command("generate_items", "wr", "--design", "wep-reasoning", "--hops", "1", "--contexts", "CNC")
    call_command("create_study", "other", "--instrument", "wep_choice")
    with pytest.raises(CommandError, match="makes verbalisation_choice items"):
        call_command("generate_items", "other", "--design", "wep-reasoning", "--hops", "1")
    assert Item.objects.count() == 0
