"""A new user's script (examples/api_quickstart.py) against a live server with only an API token: it creates a
study, uploads items and earlier answers, registers an endpoint, starts a model run, waits for it and downloads
the report and the Parquet export. The documentation's pandas lines run against the same server."""
from __future__ import annotations

import csv
import importlib.util
import re
from pathlib import Path

import pandas as pd
import pytest
from rest_framework.authtoken.models import Token

from stub_openai import Reply, StubOpenAI
from families.belem.instrument import EXPRESSIONS

ROOT = Path(__file__).resolve().parent.parent


def load_quickstart():
    spec = importlib.util.spec_from_file_location("api_quickstart", ROOT / "examples" / "api_quickstart.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def earlier_answers(belem_dir: Path, path: Path, people: int = 4) -> Path:
    """Answers of ``people`` attentive respondents: 2 statements per expression and 2 controls each, higher
    for stronger expressions (so they pass the attention filter)."""
    with open(belem_dir / "non-verifiable.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    by_label: dict[str, list[str]] = {}
    for row in rows:
        label = "control" if row["is_control"] == "True" else row["uncertainty_expression"]
        by_label.setdefault(label, []).append(row["statement_id"])
    with open(path, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["pid", "statement_id", "expression", "answer"])
        for n in range(people):
            for rank, label in enumerate(EXPRESSIONS):
                for sid in by_label[label][2 * n: 2 * n + 2]:
                    out.writerow([f"EARLIER{n}", sid, label, max(0, 95 - 5 * rank - 5 * (n % 2))])
            for sid in by_label["control"][2 * n: 2 * n + 2]:
                out.writerow([f"EARLIER{n}", sid, "control", 100])
    return path


@pytest.fixture
def server(live_server, django_user_model, settings):
    from config.celery import app

    settings.CELERY_TASK_ALWAYS_EAGER = True
    app.conf.task_always_eager = True  # the live server's request runs the queued tasks itself
    user = django_user_model.objects.create_superuser("scripted", password="pw")
    try:
        yield live_server.url, Token.objects.create(user=user).key
    finally:
        app.conf.task_always_eager = False


def docs_block(heading: str) -> str:
    text = (ROOT / "docs" / "reference" / "api.md").read_text()
    section = text[text.index(heading):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.django_db(transaction=True)
def test_a_script_with_only_a_token_runs_a_study_end_to_end(server, belem_dir, tmp_path):
    url, token = server
    quickstart = load_quickstart()
    with StubOpenAI() as stub:
        stub.default = Reply.answer("80")
        result = quickstart.main([
            "--url", url, "--token", token, "--slug", "scripted", "--items", str(belem_dir / "non-verifiable.csv"),
            "--answers", str(earlier_answers(belem_dir, tmp_path / "answers.csv")), "--endpoint", "stubbed",
            "--base-url", stub.base_url, "--model", "stub-model", "--run-items", "30", "--out", str(tmp_path / "out")])
    # the pre-flight check when the endpoint was registered (remembered when the run is created), then 30 answers
    assert result["status"] == "completed" and len(stub.requests) == 31 and stub.requests[0].body["max_tokens"] == 1
    frame = pd.read_parquet(result["parquet"])
    assert result["rows"] == len(frame) == 4 * 30 + 30  # earlier human answers and the model's
    assert (frame["respondent_type"] == "human").sum() == 120
    assert set(frame.loc[frame["respondent_type"] == "model", "value"]) == {80.0}
    assert result["summary_rows"] >= 4  # Human Mode, Human Individual, Random and the model
    report = (tmp_path / "out" / "report.json").read_text()
    assert "stubbed (greedy)" in report

    # the documentation's analyst lines, against the same server
    code = docs_block("## Python: the API into pandas")
    scope = {"SITE": url, "TOKEN": token, "STUDY": "scripted"}
    exec(code, scope)  # noqa: S102 - the documentation's own example
    assert len(scope["answers"]) == len(frame) and scope["answers"]["value"].dtype == "float64"
    assert list(scope["summary"]["agent"])[:3] == ["Human Mode", "Human Individual", "Random"]
    assert scope["runs"]["status"].tolist() == ["completed"]


@pytest.mark.django_db(transaction=True)
def test_the_script_without_earlier_answers_shows_the_models_and_what_is_missing(server, belem_dir, tmp_path,
                                                                                 capsys):
    """--answers is optional: without it (a new user's first try, as on the walk of issue 23) the report has no
    Belem summary yet, and the script ended in KeyError: 'summary'. It prints what is missing and the first table."""
    url, token = server
    quickstart = load_quickstart()
    with StubOpenAI() as stub:
        stub.default = Reply.answer("80")
        result = quickstart.main([
            "--url", url, "--token", token, "--slug", "models-only", "--items", str(belem_dir / "non-verifiable.csv"),
            "--endpoint", "stubbed", "--base-url", stub.base_url, "--model", "stub-model", "--run-items", "30",
            "--out", str(tmp_path / "out")])
    assert result["status"] == "completed" and result["table"] == "generic_summary" and result["summary_rows"] == 1
    printed = capsys.readouterr().out
    assert "not built yet: study 'models-only' has no completed human participants yet" in printed
