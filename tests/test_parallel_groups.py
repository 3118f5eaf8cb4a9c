"""How ``make test`` spreads the suite over pytest-xdist workers (tests/conftest.py): a test file goes whole to one
worker, the files sharing a service or the local model go to the same one."""
from __future__ import annotations

import pytest

from conftest import LOCAL_MODEL, SHARED_SERVICES, group_of


def test_a_file_is_one_group_whatever_its_parameters():
    assert group_of("tests/test_preflight.py::test_a") == group_of("tests/test_preflight.py::test_b[x@y-1]") \
        == "test_preflight"


@pytest.mark.parametrize("files", [SHARED_SERVICES, LOCAL_MODEL])
def test_files_sharing_a_resource_are_one_group(files):
    assert len({group_of(f"tests/{stem}.py::test_x[sqlite]") for stem in files}) == 1



def test_the_slow_first_groups_name_real_groups():
    """Every SLOW_FIRST entry is the group of a test file that exists, once (a renamed file is not silently left
    to the end of the run)."""
    from pathlib import Path

    from conftest import SLOW_FIRST

    known = {group_of(f"tests/{path.stem}.py::test_x") for path in Path(__file__).parent.glob("test_*.py")}
    assert set(SLOW_FIRST) <= known, set(SLOW_FIRST) - known
    assert len(set(SLOW_FIRST)) == len(SLOW_FIRST)
