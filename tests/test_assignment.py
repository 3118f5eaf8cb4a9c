"""Drawing a participant's items (surveys/assignment.py) on the real Belem et al. stimuli."""
from __future__ import annotations

import random
import re
from collections import Counter

import pytest
from django.utils import timezone

from surveys import flow
from surveys.assignment import assign, item_usage
from surveys.importers import import_items
from families.belem.instrument import EXPRESSIONS, NAMES
from surveys.models import Participant, Response, Study

PRONOUNS = {"female": {"they": "she", "their": "her"}, "male": {"they": "he", "their": "his"}}


@pytest.fixture
def imported_v(db, belem_dir):
    study = Study.objects.create(slug="v", title="Verifiable")
    import_items(study, belem_dir / "verifiable.csv")
    return study


def new_participant(study: Study, n: int, rng: random.Random) -> tuple[Participant, list]:
    participant = Participant.objects.create(study=study, prolific_pid=f"pid{n:04d}")
    return participant, assign(participant, rng)


def complete_all(participant: Participant, slots) -> None:
    Response.objects.bulk_create(Response(assignment=s, participant=participant, item_id=s.item_id, value=50)
                                 for s in slots)
    Participant.objects.filter(pk=participant.pk).update(status=Participant.Status.COMPLETED,
                                                         completed_at=timezone.now())


def test_a_participant_gets_two_statements_per_expression_plus_controls(imported_nv):
    participant, slots = new_participant(imported_nv, 1, random.Random(1))
    items = [s.item for s in slots]
    assert len(slots) == 14 * 2 + 2
    assert [s.position for s in slots] == list(range(1, 31))
    per_expression = Counter(i.expression for i in items if not i.is_control)
    assert per_expression == {e: 2 for e in EXPRESSIONS}
    assert sum(i.is_control for i in items) == 2
    assert len({i.statement for i in items}) == 30  # every slot a different statement
    assert len({i.pk for i in items}) == 30
    assert not any(i.is_demonstration for i in items)
    again = assign(participant, random.Random(99))  # drawing twice returns the same slots, adds nothing
    assert [(s.position, s.item_id) for s in again] == [(s.position, s.item_id) for s in slots]
    assert participant.assignments.count() == 30


def test_order_is_shuffled_per_participant(imported_nv):
    _, first = new_participant(imported_nv, 1, random.Random(1))
    _, second = new_participant(imported_nv, 2, random.Random(2))
    labels = lambda slots: [s.item.label for s in slots]  # noqa: E731
    assert labels(first) != labels(second)
    assert labels(first) != sorted(labels(first))


def test_verifiable_study_gives_one_true_and_one_false_statement_per_expression(imported_v):
    for n in range(5):
        _, slots = new_participant(imported_v, n, random.Random(n))
        items = [s.item for s in slots if not s.item.is_control]
        assert len(items) == 28
        by_expression = Counter((i.expression, i.truth) for i in items)
        assert by_expression == {(e, t): 1 for e in EXPRESSIONS for t in ("true", "false")}
        assert len({s.item.statement for s in slots}) == 30


def test_speakers_are_gender_balanced_from_the_name_list(imported_nv):
    for n in range(3):
        _, slots = new_participant(imported_nv, n, random.Random(n))
        genders = Counter(s.speaker_gender for s in slots)
        assert genders == {"female": 15, "male": 15}
        for slot in slots:
            assert slot.speaker_name in NAMES[slot.speaker_gender]


def test_pronouns_follow_the_drawn_speaker(imported_nv):
    _, slots = new_participant(imported_nv, 1, random.Random(7))
    kind = imported_nv.kind
    with_placeholders = 0
    for slot in slots:
        item = slot.item
        context = kind.page_context(item, slot.speaker())
        sentence = context["sentence"]
        assert slot.speaker_name in sentence and f"{slot.speaker_name}'s perspective" in context["question"]
        assert "[[" not in sentence + context["question"] + " ".join(context["hints"])
        # the statement as this speaker's gender reads it, built independently of the instrument
        clause = item.statement.strip().rstrip(".")
        for placeholder, word in PRONOUNS[slot.speaker_gender].items():
            clause = clause.replace(f"[[{placeholder}]]", word)
        assert clause in sentence and clause in context["question"]
        if "[[" in item.statement:
            with_placeholders += 1
            other = "male" if slot.speaker_gender == "female" else "female"
            wrong = set(PRONOUNS[other].values()) - set(re.findall(r"\b\w+\b", item.statement.lower()))
            words = set(re.findall(r"\b\w+\b", sentence.lower()))
            assert not (wrong & words), (sentence, slot.speaker_gender)
    assert with_placeholders > 0  # the NV set uses [[they]]/[[their]]


def simulate_series(study: Study, count: int, seed: int = 2024):
    """Participants who each complete their list; yields (participant number, their slots, usage after)."""
    rng = random.Random(seed)
    for n in range(count):
        participant, slots = new_participant(study, n, rng)
        complete_all(participant, slots)
        yield n + 1, slots, item_usage(study)


@pytest.mark.parametrize("fixture", ["imported_nv", "imported_v"])
def test_no_participant_sees_a_statement_twice_over_a_series(db, request, fixture):
    study = request.getfixturevalue(fixture)
    for n, slots, _ in simulate_series(study, 40):
        assert len(slots) == 30
        assert len({s.item.statement for s in slots}) == 30, f"participant {n}"


@pytest.mark.parametrize("fixture", ["imported_nv", "imported_v"])
def test_items_are_used_equally_over_a_series_of_participants(db, request, fixture):
    """After every completed participant, item use differs by at most one (within expressions and controls)."""
    study = request.getfixturevalue(fixture)
    main_ids = set(study.main_items().values_list("pk", flat=True))
    # 40 × 2 = 80 uses per 60 items of each expression (and of the controls): past the end of a round
    for n, _, usage in simulate_series(study, 40):
        assert set(usage) == main_ids
        assert max(usage.values()) - min(usage.values()) <= 1, f"after participant {n}"
    assert sum(usage.values()) == 40 * 30
    assert Counter(usage.values()) == {1: 600, 2: 300}


def test_a_started_participant_holds_all_slots(imported_nv):
    participant, slots = new_participant(imported_nv, 1, random.Random(1))
    usage = item_usage(imported_nv)
    assert {pk for pk, used in usage.items() if used} == {s.item_id for s in slots}


def test_returned_and_timed_out_participants_release_their_unanswered_slots(imported_nv):
    rng = random.Random(3)
    returned, slots = new_participant(imported_nv, 1, rng)
    answered = slots[:5]
    Response.objects.bulk_create(Response(assignment=s, participant=returned, item_id=s.item_id, value=50)
                                 for s in answered)
    flow.mark_participants(Participant.objects.filter(pk=returned.pk), Participant.Status.RETURNED)
    usage = item_usage(imported_nv)
    assert {pk for pk, used in usage.items() if used} == {s.item_id for s in answered}

    timed_out, slots2 = new_participant(imported_nv, 2, rng)
    # the next participant avoids the five answered items: they are the only used ones
    assert not {s.item_id for s in slots2} & {s.item_id for s in answered}
    flow.mark_participants(Participant.objects.filter(pk=timed_out.pk), Participant.Status.TIMED_OUT)
    usage = item_usage(imported_nv)
    assert sum(usage.values()) == 5

    flow.reinstate_participants(Participant.objects.filter(pk=timed_out.pk))
    assert sum(item_usage(imported_nv).values()) == 5 + 30


@pytest.mark.parametrize("slug", ["demo", "demo-verifiable"])
def test_demo_lists_repeat_a_statement_at_most_twice_and_far_apart(db, slug):
    """30 items over 20 statements: no statement more than ⌈30/20⌉ = 2 times, repeats spread apart, while
    items stay balanced (the linear repeat cost used to show one statement up to 11 times)."""
    from surveys.demo import loader

    loader.load_demo()
    study = Study.objects.get(slug=slug)
    statements = study.main_items().values("statement").distinct().count()
    assert statements == 20
    for n, slots, usage in simulate_series(study, 25, seed=7):
        per_statement = Counter(s.item.statement for s in slots)
        assert max(per_statement.values()) <= -(-len(slots) // statements) == 2, f"participant {n}"
        assert len(per_statement) == statements  # every statement used: repeats as few as possible
        positions: dict[str, list[int]] = {}
        for s in slots:
            positions.setdefault(s.item.statement, []).append(s.position)
        gaps = [b - a for ps in positions.values() for a, b in zip(ps, ps[1:])]
        assert min(gaps) >= 10, f"participant {n}: repeats too close ({sorted(gaps)})"
        assert max(usage.values()) - min(usage.values()) <= 1, f"after participant {n}"


def test_spread_order_keeps_repeats_a_block_apart():
    from types import SimpleNamespace

    from surveys.assignment import spread_order

    items = [SimpleNamespace(statement=f"s{i % 7}", key=i) for i in range(20)]  # 7 statements: 3, 3, 3, …
    for seed in range(20):
        order = spread_order(items, random.Random(seed))
        assert sorted(i.key for i in order) == list(range(20))
        where: dict[str, list[int]] = {}
        for pos, item in enumerate(order):
            where.setdefault(item.statement, []).append(pos)
        assert min(b - a for ps in where.values() for a, b in zip(ps, ps[1:])) >= 20 // 3
    assert len({tuple(i.key for i in spread_order(items, random.Random(s))) for s in range(5)}) == 5


@pytest.mark.parametrize("fixture", ["imported_nv", "imported_v"])
def test_a_capped_draw_keeps_balance_and_avoids_repeats(db, request, fixture, monkeypatch):
    """With the program shown only a short list per pool (the cap that keeps a 40,000-item study's draw
    short under the study's lock), every participant still sees 30 statements and item use still differs
    by at most one: the short list holds the least-used items first."""
    from surveys import assignment

    study = request.getfixturevalue(fixture)
    monkeypatch.setattr(assignment, "CANDIDATES_PER_POOL", 8)  # the Belem pools have 60 (30 per truth value)
    seen: list[int] = []
    real_milp = assignment.milp
    monkeypatch.setattr(assignment, "milp", lambda cost, **kw: seen.append(len(cost)) or real_milp(cost, **kw))
    for n, slots, usage in simulate_series(study, 40):
        assert len({s.item.statement for s in slots}) == 30, f"participant {n}"
        assert max(usage.values()) - min(usage.values()) <= 1, f"after participant {n}"
    pools = 15 if fixture == "imported_nv" else 29  # expressions (split by truth when verifiable) + controls
    assert max(seen) <= pools * 8 + pools * 8  # ≤ 8 items per pool, plus one variable per statement
