"""``reproduce --rerun-models`` sends nothing it has not shown and had confirmed (issue 30, point 6): a tampered
package (``n: 128``, ``max_tokens: 100000``, another model, its MANIFEST written again) is refused with zero
requests to the stub; an unconfirmed rerun, or one whose estimate is over ``--budget``, sends nothing; typing yes
at a terminal sends exactly the requests shown."""
from __future__ import annotations

import io
import json
import zipfile

import pytest

from analysis.replication.manifest import MANIFEST, zip_bytes
from analysis.replication.rerun import param_problems
from stub_openai import stub  # noqa: F401 (a fixture)
from test_replication_package import (packaged, priced_endpoint, reproduce, scale_reply,  # noqa: F401 (fixtures)
                                      study)

pytestmark = pytest.mark.django_db


def tampered(path, change) -> None:
    """Every packaged model answer's parameters changed by ``change``, the MANIFEST computed again (as whoever
    tampers with a package does)."""
    with zipfile.ZipFile(path) as archive:
        files = {n: archive.read(n) for n in archive.namelist() if n != MANIFEST}
    rows = [json.loads(line) for line in files["data/model_answers.jsonl"].splitlines()]
    for row in rows:
        row["params"] = change(dict(row["params"]))
    files["data/model_answers.jsonl"] = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode()
    path.write_bytes(zip_bytes(files))


def test_a_tampered_package_is_refused_and_sends_nothing(packaged, stub):
    tampered(packaged, lambda p: {**p, "n": 128, "max_tokens": 100000, "model": "o1-pro-2025"})
    priced_endpoint(stub)
    stub.responder = scale_reply
    before = len(stub.requests)
    printed, code = reproduce(packaged, "--rerun-models", "--endpoint", "again", "--yes", "--budget", "1000000")
    assert code != 0
    assert "refused, nothing sent" in printed
    assert "parameter 'n' = 128 is not one the platform sends" in printed
    assert "parameter 'model' = o1-pro-2025 is not one the platform sends" in printed
    assert '"max_tokens": 100000' in printed and '"n": 128' in printed  # shown before being refused
    assert len(stub.requests) == before


def test_parameters_outside_the_run_forms_bounds_are_refused(packaged, stub):
    tampered(packaged, lambda p: {**p, "max_tokens": 100001, "temperature": 11})
    priced_endpoint(stub)
    before = len(stub.requests)
    printed, code = reproduce(packaged, "--rerun-models", "--endpoint", "again", "--yes", "--budget", "1000000")
    assert code != 0 and "max_tokens = 100001 is outside the platform's bounds (1 to 100000)" in printed
    assert "temperature = 11 is outside the platform's bounds (0 to 10)" in printed
    assert len(stub.requests) == before


def test_param_problems_hold_to_the_bounds():
    assert param_problems({"temperature": 0.0, "max_tokens": 8, "seed": 3}, "a") == []
    assert param_problems({"temperature": 10, "max_tokens": 100_000, "seed": -(2**62)}, "a") == []
    for bad in ({"max_tokens": 0}, {"max_tokens": True}, {"max_tokens": 8.5}, {"temperature": -0.1},
                {"temperature": "1"}, {"seed": 2**62 + 1}, {"logprobs": True}, {"stop": ["x"]}):
        assert param_problems(bad, "a"), bad
    assert param_problems([1], "a") == ["a: the parameters are not a JSON object"]


def test_an_unconfirmed_rerun_or_one_over_budget_sends_nothing(packaged, stub, monkeypatch):
    priced_endpoint(stub)
    stub.responder = scale_reply
    before = len(stub.requests)
    printed, code = reproduce(packaged, "--rerun-models", "--endpoint", "again")  # no terminal, no --yes
    assert code != 0 and "nothing sent: not confirmed" in printed and "would send" in printed
    printed, code = reproduce(packaged, "--rerun-models", "--endpoint", "again", "--yes", "--budget", "0.000001")
    assert code != 0 and "is over the budget $0.000001" in printed
    printed, code = reproduce(packaged, "--rerun-models", "--endpoint", "again", "--yes")
    assert code != 0 and "--yes goes with" in printed
    unpriced = priced_endpoint(stub, name="free")
    unpriced.price_prompt_per_1k = unpriced.price_completion_per_1k = 0
    unpriced.save()
    printed, code = reproduce(packaged, "--rerun-models", "--endpoint", "free", "--yes", "--budget", "5")
    assert code != 0 and "has no prices, so --budget cannot bound the cost" in printed
    assert len(stub.requests) == before

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal("no\n"))
    printed, code = reproduce(packaged, "--rerun-models", "--endpoint", "free")
    assert code != 0 and "nothing sent: not confirmed" in printed and len(stub.requests) == before
    monkeypatch.setattr("sys.stdin", Terminal("yes\n"))
    printed, code = reproduce(packaged, "--rerun-models", "--endpoint", "free")
    assert code == 0, printed
    assert "cost not estimated (the endpoint has no prices)" in printed and "agreement 1.000" in printed
    assert len(stub.requests) > before
