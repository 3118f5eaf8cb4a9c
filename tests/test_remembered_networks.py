"""Commands run in another terminal reach the endpoints `make run`'s web server and worker reach (issue 23 walk):
bin/run-platform keeps MODEL_ENDPOINT_ALLOWED_NETWORKS in <var>/model-endpoint-allowed-networks while it runs,
and settings read it when the variable is not set, so `add_endpoint … --base-url http://127.0.0.1:…` and
`elicit … --endpoint gemma3-270m-local` no longer refuse the loopback address the admin accepts."""
from __future__ import annotations

import json
from pathlib import Path

from tests.test_settings import run

PROBE = ("import json, django; from django.conf import settings; django.setup(); "
         "from elicitation.destinations import url_problem; "
         "print(json.dumps([settings.MODEL_ENDPOINT_ALLOWED_NETWORKS, url_problem('http://127.0.0.1:8399/v1')]))")


def probe(env: dict[str, str]) -> tuple[list[str], str]:
    result = run(["-c", PROBE], env)
    assert result.returncode == 0, result.stderr
    networks, problem = json.loads(result.stdout.strip().splitlines()[-1])
    return networks, problem


def test_a_command_in_another_terminal_reaches_what_make_run_allows(tmp_path):
    env = {"HEDGELAB_VAR_DIR": str(tmp_path)}
    networks, problem = probe(env)
    assert networks == [] and "loopback" in problem and "MODEL_ENDPOINT_ALLOWED_NETWORKS" in problem

    (tmp_path / "model-endpoint-allowed-networks").write_text("127.0.0.0/8,::1\n")
    assert probe(env) == (["127.0.0.0/8", "::1"], "")

    networks, problem = probe(env | {"MODEL_ENDPOINT_ALLOWED_NETWORKS": "10.1.2.0/24"})  # the variable wins
    assert networks == ["10.1.2.0/24"] and "loopback" in problem


def test_make_run_keeps_the_networks_while_it_runs():
    script = (Path(__file__).resolve().parent.parent / "bin" / "run-platform").read_text()
    kept = script.index('printf \'%s\\n\' "$MODEL_ENDPOINT_ALLOWED_NETWORKS" >"$ALLOWED_NETWORKS_FILE"')
    assert kept < script.index("config.wsgi --bind")
    cleanup = script[script.index("cleanup() {"):script.index("stop() {")]
    assert 'rm -f "$ALLOWED_NETWORKS_FILE"' in cleanup  # a stopped `make run` no longer relaxes anything
    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    assert "demo run: export MODEL_ENDPOINT_ALLOWED_NETWORKS ?= 127.0.0.0/8,::1" in makefile
