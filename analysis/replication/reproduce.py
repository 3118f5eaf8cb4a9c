"""``manage.py reproduce FILE.zip``: check the package against its MANIFEST (a changed, missing or extra file is
refused, naming it, before anything is read), load it into a fresh scratch SQLite database in a child process
(analysis/replication/scratch.py; the site's own database is never opened by it), recompute the report and
compare it with the packaged one table by table and figure by figure (analysis/replication/compare.py); with an
endpoint, ask the stored prompts again (analysis/replication/rerun.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from analysis.replication.compare import TOLERANCE, report_diff
from analysis.replication.manifest import read_checked

ROOT = Path(__file__).resolve().parents[2]
ENDPOINT_FIELDS = ("name", "base_url", "model", "api_style", "api_key_env", "supports_seed", "timeout_seconds",
                   "max_retries", "retry_backoff_seconds", "retry_backoff_max_seconds")


class ScratchFailed(Exception):
    """The child process could not migrate, load or recompute; its message says why."""


@dataclass
class Reproduction:
    """What ``reproduce`` found: the differences per section, and the rerun's rows when one was asked for."""

    diff: dict[str, list[str]]
    rerun: list[dict[str, Any]] | None = None

    @property
    def differences(self) -> int:
        return sum(len(v) for v in self.diff.values())


def endpoint_spec(endpoint: Any) -> dict[str, Any]:
    """What the scratch database needs of an endpoint to ask it (its key stays in its environment variable)."""
    return {name: getattr(endpoint, name) for name in ENDPOINT_FIELDS}


def recompute(files: dict[str, bytes], endpoint: dict[str, Any] | None = None,
              timeout: float = 1800) -> tuple[dict[str, bytes], list[dict[str, Any]] | None]:
    """The report recomputed from ``files`` in a child process on a scratch SQLite database (removed after), and
    the rerun's results when ``endpoint`` is given."""
    with tempfile.TemporaryDirectory(prefix="hedgelab-reproduce-") as scratch:
        folder = Path(scratch)
        package, out = folder / "package", folder / "out"
        for name, data in files.items():
            target = package / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        args = [sys.executable, "-m", "analysis.replication.scratch", str(package), str(out),
                str(Path(settings.VAR_DIR) / "replication")]
        if endpoint is not None:
            (folder / "endpoint.json").write_text(json.dumps(endpoint), encoding="utf-8")
            args.append(str(folder / "endpoint.json"))
        env = {k: v for k, v in os.environ.items() if k not in ("CACHE_URL", "DATABASE_URL")}
        env.update(DATABASE_URL=f"sqlite:///{folder / 'scratch.sqlite3'}", HEDGELAB_VAR_DIR=str(folder / "var"),
                   EXPORT_ID_SALT="hedgelab-scratch", DJANGO_SETTINGS_MODULE="config.settings")
        done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise ScratchFailed((done.stderr.strip().splitlines() or ["no message"])[-1] if done.returncode in (2, 3)
                                else done.stderr.strip()[-2000:])
        recomputed = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    rerun = json.loads(recomputed.pop("rerun.json")) if "rerun.json" in recomputed else None
    return recomputed, rerun


def reproduce(path: str | Path, endpoint: dict[str, Any] | None = None) -> Reproduction:
    """Check, load and recompute the package at ``path``: ManifestError before anything is loaded, ScratchFailed
    when the scratch process fails."""
    files = read_checked(path)
    recomputed, rerun = recompute(files, endpoint)
    return Reproduction(diff=report_diff(files, recomputed), rerun=rerun)


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
