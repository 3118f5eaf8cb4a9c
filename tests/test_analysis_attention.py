"""The attention filter applied to a study: ρ and decision stored, excluded reported and kept."""
from __future__ import annotations

import io
import random

import numpy as np
import pytest
from django.core.management import CommandError, call_command
import warnings

from scipy import stats

from families.belem.attention import FilterError, apply_attention_filter
from surveys.importers import import_items
from surveys.models import Participant, Response, Study
from test_analysis_factories import attentive, constant, contrarian


def expected_rhos(study: Study, ranking_study: Study) -> dict[str, float]:
    """ρ per PID computed here from scratch: labels scored by their mean over all completed participants
    of the ranking study; Spearman between a participant's answers and their labels' scores."""
    rows = Response.objects.filter(item__study=ranking_study, participant__status="completed")
    sums: dict[str, list[float]] = {}
    for r in rows.select_related("item"):
        sums.setdefault(r.item.label, []).append(r.value)
    mean = {label: float(np.mean(v)) for label, v in sums.items()}
    out = {}
    for p in Participant.objects.filter(study=study, status="completed"):
        answers = list(p.responses.select_related("item"))
        x = [a.value for a in answers]
        y = [mean[a.item.label] for a in answers]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", stats.ConstantInputWarning)  # "flat" answers: ρ undefined
            out[p.prolific_pid] = stats.spearmanr(x, y).statistic
    return out


@pytest.fixture
def nv_people(imported_nv):
    rng = random.Random(1)
    for n in range(8):
        attentive(imported_nv, f"good{n}", rng)
    contrarian(imported_nv, "spam", rng)
    constant(imported_nv, "flat", rng)
    Participant.objects.create(study=imported_nv, prolific_pid="halfway", status="started", attention_rho=0.5)
    return imported_nv


def test_filter_stores_rho_and_decision_and_keeps_everyone(nv_people):
    result = apply_attention_filter(nv_people)
    expected = expected_rhos(nv_people, nv_people)
    stored = {p.prolific_pid: p for p in Participant.objects.filter(study=nv_people)}
    assert len(stored) == 11  # nobody deleted
    for pid, rho in expected.items():
        if np.isnan(rho):
            assert stored[pid].attention_rho is None
        else:
            assert stored[pid].attention_rho == pytest.approx(rho, abs=1e-12)
        assert stored[pid].attention_included is (bool(rho > 0.2))
    assert stored["spam"].attention_included is False and stored["spam"].attention_rho < -0.5
    assert stored["flat"].attention_included is False and stored["flat"].attention_rho is None
    assert all(stored[f"good{n}"].attention_included for n in range(8))
    # a participant who has not completed is left as they were
    assert stored["halfway"].attention_rho == 0.5 and stored["halfway"].attention_included is None
    assert (result.evaluated, result.included) == (10, 8)
    assert [e.prolific_pid for e in result.excluded] == ["flat", "spam"]  # undefined ρ first, then lowest
    assert result.ranking[0]["label"] == "almost certain" and len(result.ranking) == 15
    assert result.ranking_study == "nv"


def test_threshold_comes_from_the_study(nv_people):
    expected = expected_rhos(nv_people, nv_people)
    cut = sorted(r for pid, r in expected.items() if pid.startswith("good"))[3]
    nv_people.attention_threshold = cut
    nv_people.save()
    result = apply_attention_filter(nv_people)
    kept = set(Participant.objects.filter(study=nv_people, attention_included=True).values_list("prolific_pid", flat=True))
    assert kept == {pid for pid, r in expected.items() if r > cut}
    assert result.included == 4  # ρ equal to the threshold fails (keep ρ > threshold)


def test_verifiable_study_uses_its_reference_ranking(nv_people, belem_dir):
    v = Study.objects.create(slug="v", title="V", reference_study=nv_people)
    import_items(v, belem_dir / "verifiable.csv")
    rng = random.Random(7)
    for n in range(6):
        attentive(v, f"v{n}", rng, noise=15, shift={"true": 10, "false": -10})
    # this one's answers rank "uncertain" and "possible" high, unlike the reference
    contrarian(v, "vspam", rng)
    apply_attention_filter(v)
    expected = expected_rhos(v, nv_people)
    own = expected_rhos(v, v)
    assert any(abs(expected[p] - own[p]) > 1e-6 for p in expected)  # the ranking source matters
    for p in Participant.objects.filter(study=v):
        assert p.attention_rho == pytest.approx(expected[p.prolific_pid], abs=1e-12)
    v.reference_study = None
    v.save()
    with pytest.raises(FilterError, match="no reference_study"):
        apply_attention_filter(v)


def test_attention_command(nv_people):
    out = io.StringIO()
    call_command("attention", "nv", stdout=out)
    text = out.getvalue()
    assert "nv: 8 of 10 completed participants kept; 2 excluded" in text
    assert "rule belem-ranking (threshold = 0.2): 2 excluded" in text
    assert "excluded flat: belem-ranking: ρ undefined" in text and "excluded spam: belem-ranking: ρ = -" in text
    with pytest.raises(CommandError, match="no study with slug"):
        call_command("attention", "missing")


def test_attention_command_without_participants(imported_nv):
    with pytest.raises(CommandError, match="no completed participants"):
        call_command("attention", "nv")


def test_attention_command_and_button_for_a_study_whose_filter_is_off(nv_people, admin_client):
    """Issue 32.4: with the filter off, `attention` and the report page's button said "ρ > None" and crashed
    (TypeError); now the study has no rule to apply and says so, and every decision is stored as kept."""
    from django.urls import reverse
    from surveys.models import ExclusionDecision

    nv_people.attention_filter = False
    nv_people.save()
    out = io.StringIO()
    call_command("attention", "nv", stdout=out)
    assert "nv: the study declares no exclusion rules" in out.getvalue()
    assert "all 10 completed participants kept" in out.getvalue()
    decisions = ExclusionDecision.objects.filter(participant__study=nv_people)
    assert decisions.count() == 10 and not decisions.filter(excluded=True).exists()
    out = io.StringIO()
    call_command("exclusions", "nv", stdout=out)
    assert "declares no exclusion rules" in out.getvalue()
    page = admin_client.post(reverse("admin:analysis_studyanalysis_attention", args=[nv_people.pk]), follow=True)
    assert page.status_code == 200 and "declares no exclusion rules" in page.content.decode()


def test_the_buttons_message_names_the_study_by_its_slug_as_written(nv_people, admin_client):
    """The admin writes every message with its first letter capitalised: the report page's button said
    "Walk-sure: …" for study walk-sure (the walk of issue 32); it names the study as "Study walk-sure: …"."""
    from django.urls import reverse

    nv_people.slug = "walk-sure"
    nv_people.save()
    page = admin_client.post(reverse("admin:analysis_studyanalysis_attention", args=[nv_people.pk]), follow=True)
    text = page.content.decode()
    assert page.status_code == 200 and "Study walk-sure: " in text and "Walk-sure" not in text
