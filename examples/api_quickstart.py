"""Drive hedgelab from code with nothing but an API token: create a study, upload its items and earlier
human answers, register a model endpoint, start a model run, wait for it, and download the report and the
Parquet export.

    export HEDGELAB_URL=https://survey.example.org HEDGELAB_TOKEN=<token from admin › Auth Token › Tokens>
    python examples/api_quickstart.py --slug my-study --items non-verifiable.csv --answers answers.csv \\
        --endpoint gpt4o --base-url https://api.openai.com/v1 --model gpt-4o-2024-08-06 --key-env OPENAI_API_KEY

Every call is in the API documentation at <HEDGELAB_URL>/api/docs/. Needs ``requests`` and ``pandas``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import pandas as pd
import requests


class Hedgelab:
    """A thin client: the site's address and a token; every error raises with the API's reason."""

    def __init__(self, url: str, token: str):
        self.url, self.session = url.rstrip("/"), requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"

    def call(self, method: str, path: str, **kwargs) -> requests.Response:
        response = self.session.request(method, f"{self.url}/api/{path.lstrip('/')}", timeout=300, **kwargs)
        if response.status_code >= 400:
            raise RuntimeError(f"{method} /api/{path} → {response.status_code}: {response.text[:2000]}")
        return response


def run(api: Hedgelab, slug: str, items: Path, answers: Path | None, endpoint: dict, run_items: int,
        out: Path, poll: float = 2.0) -> dict:
    """The whole round trip; returns what it made (run id, file paths, table sizes)."""
    api.call("POST", "studies/", json={"slug": slug, "title": slug.replace("-", " ").title(), "status": "live"})
    with open(items, "rb") as fh:
        print("items:", api.call("POST", f"studies/{slug}/import-items/", files={"file": fh}).json())
    if answers is not None:  # earlier human answers, one row per answer
        with open(answers, "rb") as fh:
            mapping = {"participant": "pid", "statement": "statement_id", "expression": "expression",
                       "value": "answer"}
            print("answers:", api.call("POST", f"studies/{slug}/import-responses/", files={"file": fh},
                                       data=mapping).json())
    if api.session.get(f"{api.url}/api/endpoints/{endpoint['name']}/", timeout=60).status_code == 404:
        api.call("POST", "endpoints/", json=endpoint)
    keys = [row["key"] for row in api.call("GET", f"items/?study={slug}&limit={run_items}").json()["results"]
            if not row["is_demonstration"]]
    created = api.call("POST", "runs/", json={"study": slug, "endpoint": endpoint["name"], "mode": "greedy",
                                              "items": keys, "start": True}).json()
    run_id = created["id"]
    while True:  # wait for the run
        progress = api.call("GET", f"runs/{run_id}/progress/").json()
        print(f"run {run_id}: {progress['done']}/{progress['total']} ({progress['status']})")
        if progress["status"] != "running":
            break
        time.sleep(poll)
    out.mkdir(parents=True, exist_ok=True)
    report = api.call("GET", f"studies/{slug}/report/").json()
    (out / "report.json").write_text(json.dumps(report, indent=1))
    parquet = out / f"{slug}.parquet"
    parquet.write_bytes(api.call("GET", f"studies/{slug}/export/parquet/").content)
    answers_df = pd.read_parquet(parquet)
    for reason in report["meta"].get("missing", []):  # e.g. the Belem tables without earlier human answers
        print("not built yet:", reason)
    tables = report["tables"]
    table = "summary" if "summary" in tables else next(iter(tables))  # Belem's summary, else the first there is
    summary = pd.DataFrame(tables[table])
    print(f"{table}:")
    print(summary.to_string(max_cols=8))
    return {"run": run_id, "status": progress["status"], "parquet": parquet, "rows": len(answers_df),
            "agents": sorted(answers_df["agent"].dropna().unique()), "table": table, "summary_rows": len(summary)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("HEDGELAB_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--token", default=os.environ.get("HEDGELAB_TOKEN"))
    parser.add_argument("--slug", required=True)
    parser.add_argument("--items", type=Path, required=True, help="item CSV (the item file format)")
    parser.add_argument("--answers", type=Path, help="long CSV of earlier answers: pid, statement_id, "
                                                     "expression, answer")
    parser.add_argument("--endpoint", required=True, help="endpoint name (registered if missing)")
    parser.add_argument("--base-url", help="the endpoint's OpenAI-compatible base URL (to register it)")
    parser.add_argument("--model", default="", help="model id (to register it)")
    parser.add_argument("--key-env", default="", help="NAME of the environment variable holding its key")
    parser.add_argument("--run-items", type=int, default=30, help="how many items to ask the model")
    parser.add_argument("--out", type=Path, default=Path("hedgelab-out"))
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("give --token or set HEDGELAB_TOKEN")
    endpoint = {"name": args.endpoint, "base_url": args.base_url or "", "model": args.model,
                "api_key_env": args.key_env}
    return run(Hedgelab(args.url, args.token), args.slug, args.items, args.answers, endpoint, args.run_items,
               args.out)


if __name__ == "__main__":
    result = main()
    print(result)
    sys.exit(0 if result["status"] == "completed" else 1)
