"""Binning of the 0–100 scale (SPEC §6) and the safe conversion of 0–1 answers."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from surveys.answer_bins import (BIN_CENTRES, bin_centre, bin_centres, bin_index, equal_width_index, to_percent)


@pytest.mark.parametrize("value, centre", [
    (0, 0), (2.4999, 0), (2.5, 5),        # c − 2.5 ≤ v: 2.5 opens the bin of 5
    (7.4999, 5), (7.5, 10), (50, 50),
    (97.4999, 95), (97.5, 100), (100, 100),  # 97.5–100 → 100
])
def test_bin_edges(value, centre):
    assert bin_centre(value) == centre


def test_nan_is_no_bin_and_out_of_range_is_refused():
    assert list(bin_index([np.nan, 5.0])) == [-1, 1]
    assert math.isnan(bin_centres([np.nan])[0])
    with pytest.raises(ValueError, match="outside 0–100"):
        bin_index([50, 100.5])
    with pytest.raises(ValueError, match="outside 0–100"):
        bin_index([-0.1])


def test_speaker_belief_score_is_the_same_binning():
    from families.belem.instrument import SpeakerBelief

    values = np.linspace(0, 100, 2001)
    score = SpeakerBelief().score
    assert [score(v) for v in values] == list(bin_centres(values))


def test_probability_scale_is_converted_without_float_noise():
    # 0.575 × 100 = 57.49999999999999 in floats: a naive floor((v + 2.5) / 5) would put it in 55.
    assert 0.575 * 100 < 57.5
    assert to_percent([0.575], scale=1)[0] == 57.5
    assert bin_centres([0.575], scale=1)[0] == 60
    assert list(to_percent([0.05, 0.35, 0.025, 1.0], scale=1)) == [5.0, 35.0, 2.5, 100.0]
    with pytest.raises(ValueError, match="outside 0–1"):
        to_percent([1.2], scale=1)


def test_equal_width_bins_put_inner_edges_in_the_upper_bin():
    # Tang's 20 bins [0,5), …, [95,100]: 5 → bin 1, 4.999 → bin 0, 100 → bin 19.
    assert list(equal_width_index([0, 4.999, 5, 35, 95, 99.9, 100])) == [0, 0, 1, 7, 19, 19, 19]
    # On 0–1, numpy's own edges (linspace) put 0.35 in the lower bin: 0.35 < 0.35000000000000003.
    naive = np.digitize([0.35], np.linspace(0, 1, 21))[0] - 1
    assert naive == 6
    assert equal_width_index([0.35], scale=1)[0] == 7
    k = np.arange(20)
    assert list(equal_width_index(k / 20, scale=1)) == list(k)
    assert list(equal_width_index(k * 0.05, scale=1)) == list(k)


def test_float_noise_below_an_edge_counts_as_the_edge():
    # Values are rounded to 9 decimals first: 2.499999999999999 is 2.5 carried with float noise.
    assert bin_centre(2.499999999999999) == 5
    assert bin_centre(2.4999999) == 0


@given(st.integers(0, 20), st.floats(-2.5, 2.5 - 1e-6))
def test_every_value_within_half_a_bin_goes_to_that_centre(k, offset):
    value = 5 * k + offset
    if not 0 <= value <= 100:
        return
    expected = 100 if value >= 97.5 else 5 * k
    assert bin_centre(value) == expected


@given(st.floats(0, 100))
def test_centre_is_within_half_a_bin(value):
    centre = bin_centre(value)
    assert centre in BIN_CENTRES
    assert centre - 2.5 <= round(value, 9) < centre + 2.5 or (centre == 100 and value >= 97.5)


@given(st.integers(0, 100))
def test_percent_points_survive_the_round_trip(points):
    # Any whole percentage written as a probability comes back exactly.
    assert to_percent([points / 100], scale=1)[0] == points
