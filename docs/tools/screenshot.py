"""Retake docs/images/participant-question.png: a participant's question page of the `demo` study, in headless
Chromium (Debian's /usr/bin/chromium), from a throw-away platform (SQLite in a temporary folder, runserver).

    .venv/bin/python docs/tools/screenshot.py
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
OUT = ROOT / "docs" / "images" / "participant-question.png"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as var:
        port = free_port()
        env = os.environ | {"HEDGELAB_VAR_DIR": var, "DEBUG": "1", "SITE_URL": f"http://127.0.0.1:{port}",
                            "DATABASE_URL": f"sqlite:///{var}/db.sqlite3",
                            "CELERY_BROKER_URL": f"sqla+sqlite:///{var}/broker.sqlite3"}
        for args in (["migrate", "--noinput", "-v0"], ["load_demo"]):
            subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True)
        server = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                                  cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(100):
                try:
                    urllib.request.urlopen(base + "/healthz", timeout=1)
                    break
                except OSError:
                    time.sleep(0.2)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                                     args=["--no-sandbox", "--disable-dev-shm-usage"])
                page = browser.new_page(viewport={"width": 1000, "height": 760})
                page.goto(f"{base}/s/demo/?PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1e&STUDY_ID=st1&SESSION_ID=se1")
                page.get_by_role("button", name="I agree, continue").click()
                page.get_by_role("button", name="I have read the instructions").click()
                page.get_by_label("I pledge to answer", exact=False).check()
                page.get_by_role("button", name="Start the questions").click()
                page.wait_for_selector("form[data-answer-form][data-ready]", state="attached")
                page.click("label[for=answer-70]")
                page.mouse.move(0, 0)  # no hover state in the picture
                page.wait_for_timeout(600)  # let the chosen button's transition finish
                page.screenshot(path=str(OUT), full_page=True)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
