"""The loopback stub as a program (tests/stub_openai.py, docs/howto/endpoints.md): a new user tries a model run
without a model or a key. It prints its base URL and answers every request with the given text."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_stub_runs_as_a_program_and_answers_as_told():
    server = subprocess.Popen([sys.executable, "tests/stub_openai.py", "--port", "0", "--answer", "42"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        match = re.search(r"stub endpoint at (http://127\.0\.0\.1:\d+/v1)", line)
        assert match, (line, server.stderr.read() if server.poll() is not None else "")
        request = urllib.request.Request(
            match.group(1) + "/chat/completions", method="POST", headers={"Content-Type": "application/json"},
            data=json.dumps({"model": "anything", "messages": [{"role": "user", "content": "Hi"}]}).encode())
        with urllib.request.urlopen(request, timeout=30) as reply:
            assert json.load(reply)["choices"][0]["message"]["content"] == "42"
    finally:
        server.terminate()
        server.wait(timeout=30)
