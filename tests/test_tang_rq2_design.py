"""Tang et al. RQ2 design: 360 WEP-choice items, intervals from N(μ, σ), ground truth, wording, numbers file."""
from __future__ import annotations

import pandas as pd
import pytest

from families.tang import design_rq2 as tang_rq2
from families.tang.design_rq2 import PAPER_NARROW, DesignError, generate, interval_bounds, read_numbers
from surveys.instruments import get_instrument
from surveys.models import Item, Study

WIDE = [150, 60, 101, 140, 22, 95, 130, 88, 177, 45, 99, 110, 70, 135, 100, 65, 180, 118, 84, 102]


def by_key(items):
    return {f["key"]: f for f in items}


def test_360_items_with_readable_keys():
    items = generate(numbers=[PAPER_NARROW, WIDE])
    assert len(items) == 360 == len(by_key(items))
    extra = by_key(items)["height|5|narrow|0.500|between"]["extra"]
    assert (extra["scenario"], extra["choices"], extra["numbers"], extra["confidence"], extra["interval"]) == \
        ("height", 5, "narrow", 0.5, "between")
    assert extra["sample"] == list(PAPER_NARROW) and (extra["mu"], extra["sigma"]) == (100, 10)
    for field in ("scenario", "choices", "numbers", "confidence", "interval"):
        assert len({f["extra"][field] for f in items}) == {"scenario": 3, "choices": 2, "numbers": 2,
                                                           "confidence": 5, "interval": 6}[field]


def test_interval_ends_truncated():
    assert interval_bounds(0.05, 100, 10) == (99, 100)
    assert interval_bounds(0.95, 100, 40) == (21, 178)
    # N(100, 10) at 0.5: 100 ± 6.74 → 93 and 106
    assert interval_bounds(0.5, 100, 10) == (93, 106)


def test_paper_example_share_and_ground_truth():
    items = by_key(generate(numbers=[PAPER_NARROW, WIDE]))
    first = items["height|5|narrow|0.050|below_low"]
    # 12 of the paper's 20 numbers are below 99 → 0.6 → "is maybe" (0.41, 0.61]
    assert first["extra"]["low"] == 99 and first["ground_truth"] == first["extra"]["share"] == 0.6
    assert first["extra"]["truth_choice"] == "C"
    assert items["height|3|narrow|0.050|below_low"]["extra"]["truth_choice"] == "B"
    # wide set at 0.95: outside (21, 178) → 22 and 177 inside… 180 outside → 1 of 20 = 0.05 → E / C
    outside = items["sound|5|wide|0.950|outside"]["extra"]
    assert (outside["low"], outside["high"], outside["share"], outside["truth_choice"]) == (21, 178, 0.05, "E")
    assert items["sound|3|wide|0.950|outside"]["extra"]["truth_choice"] == "C"
    # complementary intervals cover the sample except numbers equal to an end (none equal 99)
    assert items["height|5|narrow|0.050|above_low"]["extra"]["share"] == pytest.approx(0.4)


def rq2_question(fields, style="standard"):
    """The wep_choice instrument's prompt and options for one generated item (the wording lives there)."""
    item, kind = Item(**fields), get_instrument("wep_choice")
    return kind.build_prompt(item, [], style=style).text, [(o.key, o.text) for o in kind.options(item)]


def test_paper_wording():
    items = by_key(generate(numbers=[PAPER_NARROW, WIDE]))
    text, options = rq2_question(items["height|5|narrow|0.050|below_low"])
    assert text == (
        "Complete the following sentence using one of the choices, listed in descending order of likelihood, that "
        "best fits the sentence: A.is almost certainly B.is likely to be C.is maybe D.is unlikely to be E.is almost "
        "certainly not. I randomly picked 20 specimens from an unknown population. I recorded their heights, which "
        "are 116, 93, 94, 89, 108, 76, 117, 92, 103, 97, 114, 79, 96, 96, 111, 89, 98, 91, 100, 105. Based on this "
        "information, if I randomly pick one additional specimen from the same population, the specimen's height _ "
        "below 99.")
    assert options == [("A", "is almost certainly"), ("B", "is likely to be"), ("C", "is maybe"),
                       ("D", "is unlikely to be"), ("E", "is almost certainly not")]
    cot, three = rq2_question(items["score|3|wide|0.950|outside"], style="cot")
    assert cot.startswith("First compute the associated probability. Then complete the following sentence")
    assert 'A.is likely to be B.is maybe C.is unlikely to be. Give your final choice after "I choose:".' in cot
    assert cot.endswith("the student's score _ below 21 or above 178.") and [k for k, _ in three] == ["A", "B", "C"]
    with pytest.raises(ValueError, match="unknown prompt style"):
        rq2_question(items["score|3|wide|0.950|outside"], style="fancy")


def test_seeded_numbers():
    a, b, c = generate(seed=3), generate(seed=3), generate(seed=4)
    assert a == b and a != c
    narrow = a[0]["extra"]["sample"]
    assert len(narrow) == 20 and all(isinstance(v, int) for v in narrow) and a[0]["extra"]["seed"] == 3
    assert generate() == generate()  # a fixed default seed


def test_numbers_file(tmp_path):
    path = tmp_path / "numbers.txt"
    path.write_text("# narrow, then wide\n" + ", ".join(map(str, PAPER_NARROW)) + "\n" + " ".join(map(str, WIDE)) + "\n")
    assert read_numbers(path) == {"narrow": list(PAPER_NARROW), "wide": WIDE}
    assert generate(numbers=read_numbers(path)) == generate(numbers=[PAPER_NARROW, WIDE])
    for name in (path, str(path)):  # the design itself never opens a file: that is the command line's job
        with pytest.raises(DesignError, match="command line"):
            generate(numbers=name)
    path.write_text("1, 2, 3\n")
    with pytest.raises(DesignError, match="two lines"):
        read_numbers(path)
    path.write_text("1, 2, 3\n4, x, 6\n")
    with pytest.raises(DesignError, match="line 2: 'x'"):
        read_numbers(path)


def test_items_fit_the_model(db):
    study = Study.objects.create(slug="rq2", title="RQ2", instrument="wep_choice")
    Item.objects.bulk_create([Item(study=study, **f) for f in generate(seed=1)])
    assert study.report_option("reading") == "text"
    assert study.items.count() == 360
    item = study.items.get(key="sound|3|wide|0.725|below_high")
    assert item.extra["truth_choice"] in "ABC" and item.ground_truth == item.extra["share"]
    assert item.kind.build_prompt(item, []).text.endswith(f"below {item.extra['high']}.")


def test_generate_items_with_the_papers_numbers(db):
    from django.core.management import call_command

    from families.tang.metrics.consistency import compare_agents

    study = Study.objects.create(slug="rq2-paper", title="RQ2", instrument="wep_choice")
    call_command("generate_items", "rq2-paper", "--design", "tang-rq2", "--numbers", "paper")
    items = {i.key: i.extra for i in study.items.all()}
    assert len(items) == 360
    study.refresh_from_db()
    assert study.report_options == {"reading": "authors"}  # the paper's replication reads answers the authors' way
    assert items["height|5|narrow|0.050|below_low"]["sample"] == list(PAPER_NARROW)
    wide = [55, 145, 136, 120, 136, 72, 95, 62, 89, 121, 72, 84, 72, 66, 73, 99, 55, 109, 166, 129]
    assert items["score|3|wide|0.500|between"]["sample"] == wide
    # the interval ends the authors' answer files name for N(100, 40): 85/114, 73/126, 56/143, 21/178
    ends = {c: (items[f"height|5|wide|{c:.3f}|between"]["low"], items[f"height|5|wide|{c:.3f}|between"]["high"])
            for c in (0.275, 0.5, 0.725, 0.95)}
    assert ends == {0.275: (85, 114), 0.5: (73, 126), 0.725: (56, 143), 0.95: (21, 178)}
    # by hand, wide set at 0.5 (73, 126): 7 of 20 strictly below 73 (55 72 62 72 72 66 55; 73 is an end) → .35;
    # 5 above 126 → .25; 7 strictly between → .35; 12 outside → .6
    assert items["sound|5|wide|0.500|below_low"]["share"] == 0.35
    assert items["sound|5|wide|0.500|below_low"]["truth_choice"] == "D"
    assert items["sound|3|wide|0.500|below_low"]["truth_choice"] == "C"
    assert items["sound|5|wide|0.500|above_high"]["share"] == 0.25
    assert items["sound|5|wide|0.500|outside"]["share"] == 0.6 and items["sound|5|wide|0.500|outside"]["truth_choice"] == "C"
    assert items["sound|5|wide|0.950|between"]["share"] == 1.0 and items["sound|5|wide|0.950|below_low"]["share"] == 0.0
    # the empirical-consistency comparison of two agents: 120 units per scenario, df 119
    frame = pd.DataFrame([{**{k: e[k] for k in ("scenario", "choices", "numbers", "confidence", "interval",
                                                 "truth_choice")}} for e in items.values()])
    answers = pd.concat([frame.assign(agent="a", choice=frame["truth_choice"]), frame.assign(agent="b", choice="A")])
    tests = compare_agents(answers, "a", "b")
    assert tests.loc[("height", "empirical"), "n"] == 120 and tests.loc[("height", "empirical"), "df"] == 119


def scenario_samples(items):
    """{(scenario, numbers set): the sample shown}, checking each is the same across the scenario's items."""
    found = {}
    for f in items:
        key = (f["extra"]["scenario"], f["extra"]["numbers"])
        assert found.setdefault(key, f["extra"]["sample"]) == f["extra"]["sample"]
    return found


def test_drawn_numbers_a_quantity_does_not_allow_are_redrawn_and_valid_draws_are_kept():
    """Seed 1 draws -8 in the wide set: a height of -8, a score of -8, a loudness of -8 dB. Each scenario
    redraws that value until valid; every other value, and the narrow set, stay the seed's draw."""
    drawn = tang_rq2.draw_numbers(1)
    assert min(drawn["wide"]) == -8
    samples = scenario_samples(generate(seed=1))
    for scenario, floor in tang_rq2.SCENARIO_MIN.items():
        assert samples[(scenario, "narrow")] == drawn["narrow"]
        wide = samples[(scenario, "wide")]
        assert min(wide) >= floor and len(wide) == 20 and all(isinstance(v, int) for v in wide)
        assert [v for v, d in zip(wide, drawn["wide"]) if d >= floor] == [d for d in drawn["wide"] if d >= floor]
        assert [v for v, d in zip(wide, drawn["wide"]) if d < floor] != [d for d in drawn["wide"] if d < floor]
    assert generate(seed=1) == generate(seed=1)  # the redraws are seeded too


def test_a_seed_whose_draws_are_all_valid_gives_the_same_items_as_before():
    drawn = tang_rq2.draw_numbers()  # the default seed: every value above 0
    assert min(min(v) for v in drawn.values()) >= max(tang_rq2.SCENARIO_MIN.values())
    samples = scenario_samples(generate())
    assert all(samples[(s, n)] == drawn[n] for s in tang_rq2.SCENARIOS for n in drawn)
    assert not any("clipped" in f["extra"] for f in generate())


def test_given_numbers_are_clipped_per_scenario_and_keep_their_truths():
    wide = [-8, 0] + WIDE[2:]
    items = generate(numbers=[PAPER_NARROW, wide])
    samples = scenario_samples(items)
    assert samples[("height", "wide")][:2] == [1, 1] and samples[("score", "wide")][:2] == [0, 0]
    assert samples[("sound", "wide")][:2] == [0, 0]
    for f in items:
        if f["extra"]["numbers"] == "wide" and f["extra"]["scenario"] == "height":
            assert f["extra"]["clipped"] == wide
        assert "clipped" not in f["extra"] or f["extra"]["numbers"] == "wide"
        # every interval end lies above the floors: clipping moves no number across one
        low, high = f["extra"]["low"], f["extra"]["high"]
        given = wide if f["extra"]["numbers"] == "wide" else list(PAPER_NARROW)
        assert f["extra"]["share"] == float(tang_rq2.inside(given, f["extra"]["interval"], low, high).mean())
    assert samples[("score", "narrow")] == list(PAPER_NARROW)


def test_notes_name_every_number_redrawn_or_clipped():
    notes = tang_rq2.notes(generate(seed=1))
    assert len(notes) == 3 and all("wide numbers: -8 redrawn as " in n for n in notes)
    assert tang_rq2.notes(generate()) == []
    clipped = tang_rq2.notes(generate(numbers=[PAPER_NARROW, [-8] + WIDE[1:]]))
    assert clipped[0] == "height, wide numbers: -8 clipped to 1 (a height below 1 is not possible)"
