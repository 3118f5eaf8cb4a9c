"""Seconds per prompt of the bundled Gemma 3 270M (llama.cpp server) on real Belem prompts.

    .venv/bin/python bench/local_model.py [--items 5] [--base-url http://127.0.0.1:8090/v1] [--threads 0]

Builds the 2-shot prompts of the first ``--items`` non-verifiable Belem items (a scratch SQLite
database in a temporary HEDGELAB_VAR_DIR), starts the model server on a free loopback port (or uses
the one at ``--base-url``) and times, per prompt: a greedy answer (max_tokens 4, temperature 0) and a
full distribution (elicitation.full_distribution with its defaults). Then asks for the first item's
distribution again and prints how far the repeat lies from the first answer (L1 over the 21 bins and
"-1"), which shows whether the server's prefix cache changes the numbers. Needs the ``local`` extra.
Nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(ROOT))
BELEM_NV = ROOT.parent / "shared" / "data" / "belem2024-stimuli" / "non-verifiable.csv"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=5)
    parser.add_argument("--base-url", help="use a running server instead of starting one")
    parser.add_argument("--threads", type=int, default=0, help="server CPU threads (0: all cores)")
    parser.add_argument("--csv", default=str(BELEM_NV), help="Belem item file (default: non-verifiable)")
    args = parser.parse_args()

    var = Path(tempfile.mkdtemp(prefix="hedgelab-bench-local-"))
    os.environ.update(HEDGELAB_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="config.settings", LOG_LEVEL="WARNING")
    os.environ.pop("DATABASE_URL", None)
    from elicitation.local_model import LOOPBACK_NETWORKS

    os.environ.setdefault("MODEL_ENDPOINT_ALLOWED_NETWORKS", LOOPBACK_NETWORKS)  # the model runs on loopback
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    import openai

    from elicitation import local_model
    from elicitation.full_distribution import full_distribution
    from surveys.importers import import_items
    from surveys.models import Study

    study = Study.objects.create(slug="bench", title="bench")
    import_items(study, args.csv)
    items = list(study.main_items().order_by("pk")[: args.items])
    prompts = [study.kind.build_prompt(item, study.demonstrations()).text for item in items]

    process = None
    base_url = args.base_url
    if not base_url:
        gguf = local_model.assemble_gguf(var / "models")
        port = free_port()
        log = var / "local-model.log"
        started = time.perf_counter()
        process = local_model.start_server(gguf, port=port, threads=args.threads, log=log)
        base_url = f"http://127.0.0.1:{port}/v1"
        local_model.wait_until_ready(base_url, process=process, log_path=log)
        print(f"server ready in {time.perf_counter() - started:.1f} s (log {log})")
    model = local_model.served_models(base_url)[0]
    client = openai.OpenAI(base_url=base_url, api_key="none", timeout=600, max_retries=0)
    try:
        greedy_times, full_times, requests = [], [], []
        first = None
        for item, prompt in zip(items, prompts):
            t0 = time.perf_counter()
            greedy = client.completions.create(model=model, prompt=prompt, max_tokens=4, temperature=0)
            t1 = time.perf_counter()
            dist = full_distribution(client, model, prompt, {})
            t2 = time.perf_counter()
            first = first or dist
            greedy_times.append(t1 - t0)
            full_times.append(t2 - t1)
            requests.append(dist.requests)
            print(f"{item.expression or 'control':>18}: {greedy.usage.prompt_tokens} prompt tokens; greedy "
                  f"{t1 - t0:5.2f} s → {greedy.choices[0].text!r}; full distribution {t2 - t1:5.2f} s in "
                  f"{dist.requests} requests, coverage {dist.coverage:.3f}, argmax {dist.argmax}")
        print(f"median seconds per prompt: greedy {statistics.median(greedy_times):.2f}, "
              f"full distribution {statistics.median(full_times):.2f} "
              f"(median {statistics.median(requests):g} requests); load average {os.getloadavg()[0]:.1f}")
        again = full_distribution(client, model, prompts[0], {})
        a, b = first.binned(), again.binned()
        print(f"repeat of item 1: L1 distance over bins {sum(abs(a[k] - b[k]) for k in a):.4f}, "
              f"argmax {first.argmax} → {again.argmax}")
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
