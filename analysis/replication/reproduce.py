"""``manage.py reproduce FILE.zip``: check the package's hash when one is expected, read it as
analysis/replication/archive.py allows (member names the format defines, limits) and check it against its
MANIFEST (a changed, missing or extra file is refused, naming it, before anything is loaded), load it into a fresh
scratch SQLite database in a child process (analysis/replication/scratch.py; the site's own database is never
opened by it), recompute the report and compare it with the packaged one table by table and figure by figure
(analysis/replication/compare.py); with an endpoint, ask the stored prompts again (analysis/replication/rerun.py).

The package is never extracted: the child reads the same checked zip (copied under a fixed name into a private
temporary folder) into memory. The child runs isolated: ``python -I`` (no PYTHON* variables, no user site, neither
the script's folder nor the working folder on ``sys.path``), from an empty working folder, with the project's
folder put on ``sys.path`` explicitly after the standard library, so that nothing the package holds can be
imported."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.conf import settings

from analysis.replication.archive import Limits, PackageRefused, package_bytes, sha256_hex
from analysis.replication.compare import TOLERANCE, report_diff
from analysis.replication.manifest import read_checked

ROOT = Path(__file__).resolve().parents[2]
#: the child's first lines: the project's folder on sys.path after the standard library, before site-packages
BOOT = ("import runpy, sys; root = sys.argv.pop(1); "
        "sys.path.insert(next((i for i, p in enumerate(sys.path) if p.endswith('-packages')), len(sys.path)), root); "
        "runpy.run_module('analysis.replication.scratch', run_name='__main__', alter_sys=True)")
ENDPOINT_FIELDS = ("name", "base_url", "model", "api_style", "api_key_env", "supports_seed", "timeout_seconds",
                   "max_retries", "retry_backoff_seconds", "retry_backoff_max_seconds")


class ScratchFailed(Exception):
    """The child process could not migrate, load or recompute; its message says why."""


class HashMismatch(PackageRefused):
    """The package's SHA-256 is not the one expected (``--expect-sha256``)."""

    heading = "the package is not the one expected (its SHA-256 differs)"


@dataclass
class Reproduction:
    """What ``reproduce`` found: the differences per section, and the rerun's rows when one was asked for."""

    diff: dict[str, list[str]]
    rerun: list[dict[str, Any]] | None = None
    sha256: str = ""
    plan: dict[str, Any] | None = None

    @property
    def differences(self) -> int:
        return sum(len(v) for v in self.diff.values())


def endpoint_spec(endpoint: Any) -> dict[str, Any]:
    """What the scratch database needs of an endpoint to ask it (its key stays in its environment variable)."""
    return {name: getattr(endpoint, name) for name in ENDPOINT_FIELDS}


def child(data: bytes, endpoint: dict[str, Any] | None = None, confirmed: dict[str, Any] | None = None,
          timeout: float = 1800, limits: Limits = Limits()) -> dict[str, bytes]:
    """What the isolated child process wrote from the checked package zip ``data`` on a scratch SQLite database
    (the temporary folder is removed after): the recomputed report (and with ``endpoint`` the rerun's plan,
    ``rerun_plan.json``), or with a ``confirmed`` plan only the rerun's rows (``rerun.json``)."""
    with tempfile.TemporaryDirectory(prefix="hedgelab-reproduce-") as scratch:
        folder = Path(scratch)
        package, out, work = folder / "package.zip", folder / "out", folder / "work"
        package.write_bytes(data)
        work.mkdir()
        args = [sys.executable, "-I", "-c", BOOT, str(ROOT), str(package), sha256_hex(data), str(out),
                str(Path(settings.VAR_DIR) / "replication"), "--max-size", str(limits.total_bytes >> 20)]
        if endpoint is not None:
            (folder / "endpoint.json").write_text(json.dumps(endpoint), encoding="utf-8")
            args += ["--endpoint", str(folder / "endpoint.json")]
        if confirmed is not None:
            (folder / "confirmed.json").write_text(json.dumps(confirmed), encoding="utf-8")
            args += ["--confirmed", str(folder / "confirmed.json")]
        env = {k: v for k, v in os.environ.items() if k not in ("CACHE_URL", "DATABASE_URL")}
        env.update(DATABASE_URL=f"sqlite:///{folder / 'scratch.sqlite3'}", HEDGELAB_VAR_DIR=str(folder / "var"),
                   EXPORT_ID_SALT="hedgelab-scratch", DJANGO_SETTINGS_MODULE="config.settings")
        done = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise ScratchFailed((done.stderr.strip().splitlines() or ["no message"])[-1] if done.returncode in (2, 3)
                                else done.stderr.strip()[-2000:])
        return {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}


def recompute(data: bytes, endpoint: dict[str, Any] | None = None, timeout: float = 1800,
              limits: Limits = Limits()) -> tuple[dict[str, bytes], dict[str, Any] | None]:
    """The report recomputed from the checked package zip ``data``, and with ``endpoint`` the rerun's plan (what
    it would send; nothing is sent)."""
    recomputed = child(data, endpoint, timeout=timeout, limits=limits)
    plan = json.loads(recomputed.pop("rerun_plan.json")) if "rerun_plan.json" in recomputed else None
    return recomputed, plan


def rerun_confirmed(data: bytes, endpoint: dict[str, Any], confirmed: dict[str, Any], timeout: float = 1800,
                    limits: Limits = Limits()) -> list[dict[str, Any]]:
    """The rerun of the ``confirmed`` plan (its requests only) against ``endpoint``, per run."""
    return json.loads(child(data, endpoint, confirmed, timeout=timeout, limits=limits)["rerun.json"])


def checked_bytes(source: str | Path | bytes, expect_sha256: str | None = None, limits: Limits = Limits()) -> bytes:
    """The package file's bytes (bounded by ``limits``), refused with HashMismatch before anything else is read
    when ``expect_sha256`` is given and differs."""
    data = package_bytes(source, limits)
    if expect_sha256 is not None and sha256_hex(data) != expect_sha256.strip().lower():
        raise HashMismatch([f"SHA-256 {sha256_hex(data)}, expected {expect_sha256.strip().lower()}"])
    return data


def reproduce(source: str | Path | bytes, endpoint: dict[str, Any] | None = None, expect_sha256: str | None = None,
              limits: Limits = Limits()) -> Reproduction:
    """Check, load and recompute the package at ``source`` (a path or the zip's bytes): PackageRefused
    (HashMismatch, ManifestError, or a member or size archive.py refuses) before anything is loaded,
    ScratchFailed when the scratch process fails. With ``endpoint``, the rerun's plan too (nothing sent:
    :func:`rerun_confirmed` sends it once it is confirmed)."""
    data = checked_bytes(source, expect_sha256, limits)
    files = read_checked(data, limits)
    recomputed, plan = recompute(data, endpoint, limits=limits)
    return Reproduction(diff=report_diff(files, recomputed), sha256=sha256_hex(data), plan=plan)


def diff_text(result: Reproduction, shown: int = 20) -> str:
    """The diff as the command prints it: the tolerance, then each section with its differences (or ``same``)."""
    lines = [f"Compared with the packaged report ({TOLERANCE}; figures by the numbers they draw):"]
    for title, found in result.diff.items():
        if title == "files" and not found:
            continue
        lines.append(f"{title}: " + ("same" if not found else f"{len(found)} difference(s)"))
        lines += [f"  {d}" for d in found[:shown]]
        if len(found) > shown:
            lines.append(f"  … and {len(found) - shown} more")
    lines.append("no differences" if not result.differences else f"{result.differences} difference(s) in total")
    return "\n".join(lines)


def rerun_text(rows: list[dict[str, Any]]) -> str:
    """Per run: the answers asked again, their agreement with the packaged ones and (sampled) the distance."""
    lines = ["Stored prompts asked again (agreement: share of identical parsed answers):"]
    for r in rows:
        head = f"run {r['run']} ({r['agent']}, {r['mode']})"
        if "skipped" in r:
            lines.append(f"{head}: {r['skipped']}")
            continue
        agreement = "n/a" if r["agreement"] is None else f"{r['agreement']:.3f}"
        text = f"{head}: {r['answers']} answers, {r['identical']} identical, agreement {agreement}"
        if r.get("failed"):
            text += f", {r['failed']} failed"
        if r.get("distance_name"):
            shown = "n/a" if r["distance"] is None else f"{r['distance']:.4g}"
            text += f", {r['distance_name']} {shown} (mean over items)"
        lines.append(text)
    return "\n".join(lines)


def plan_cost(plan: dict[str, Any], endpoint: Any) -> Decimal | None:
    """The plan's estimated cost at ``endpoint``'s prices (completion tokens at max_tokens); None when the
    endpoint has no prices."""
    from elicitation.estimate import cost_of

    if not (endpoint.price_prompt_per_1k or endpoint.price_completion_per_1k):
        return None
    return cost_of(endpoint, plan["prompt_tokens"], plan["completion_tokens"])


def plan_text(plan: dict[str, Any], endpoint: Any, shown: int = 10) -> str:
    """What ``--rerun-models`` would send, before anything is sent: requests, tokens, cost, parameters."""
    cost = plan_cost(plan, endpoint)
    lines = [f"Asking the stored prompts again would send {len(plan['requests'])} request(s) to endpoint "
             f"{endpoint.name!r} (model {endpoint.model!r} at {endpoint.base_url}; the model is always this "
             "endpoint's):",
             f"  ≈{plan['prompt_tokens']:,} prompt tokens + ≤{plan['completion_tokens']:,} completion tokens, "
             + (f"≈ ${cost} at the endpoint's prices" if cost is not None
                else "cost not estimated (the endpoint has no prices)")
             + " [prompt tokens ≈ characters / 4; completion tokens = max_tokens per request; retries not counted]",
             "  parameters, as the package recorded them:"]
    groups = Counter(json.dumps(r["params"], sort_keys=True) for r in plan["requests"])
    for params, count in groups.most_common(shown):
        lines.append(f"    {count} request(s): {params}")
    if len(groups) > shown:
        lines.append(f"    … and {len(groups) - shown} more sets of parameters")
    return "\n".join(lines)
