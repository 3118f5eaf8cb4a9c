"""The child process of ``manage.py reproduce``, started isolated by analysis/replication/reproduce.py (``python -I``,
an empty working folder, the project's folder on ``sys.path`` explicitly) with ``PACKAGE_ZIP SHA256 OUT_DIR
TEMPLATES_DIR [--max-size MB] [--endpoint ENDPOINT_JSON [--confirmed PLAN_JSON]]`` and ``DATABASE_URL`` naming a fresh SQLite file inside
the package's scratch folder (refused otherwise). It reads the zip as the parent did (analysis/replication/archive.py
and manifest.py: never extracted, its SHA-256 the one the parent checked), migrates that database (or copies the empty migrated database of the same schema kept in TEMPLATES_DIR,
VAR_DIR/replication), loads the package (analysis/replication/loading.py), rebuilds the report, writes it to
``OUT_DIR`` as the package holds it, and with an endpoint lists what asking the stored prompts again would send
(``OUT_DIR/rerun_plan.json``, nothing sent). With ``--confirmed`` (the plan the person confirmed) it only sends
that plan's requests and writes their results (``OUT_DIR/rerun.json``).

Participants (the study's and its reference study's) are loaded under their salted id, which the scratch site
salts once more (its EXPORT_ID_SALT): the recomputed tables' ``respondent_id`` are mapped back to the packaged ids
before they are written.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any


def unsalted(data: Any, back: dict[str, str]) -> Any:
    """``data`` with every ``respondent_id`` value the scratch site salted mapped back to the packaged one."""
    if isinstance(data, dict):
        return {k: back.get(v, v) if k == "respondent_id" and isinstance(v, str) else unsalted(v, back)
                for k, v in data.items()}
    if isinstance(data, list):
        return [unsalted(v, back) for v in data]
    return data


def schema_digest() -> str:
    """A digest of Django's version and every installed app's migration files: an empty migrated database made
    under the same digest has the same schema."""
    import django
    from django.apps import apps

    digest = hashlib.sha256(django.get_version().encode())
    for app in sorted(apps.get_app_configs(), key=lambda a: a.label):
        for path in sorted((Path(app.path) / "migrations").glob("*.py")):
            digest.update(f"{app.label}/{path.name}".encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def migrated(database: Path, templates: Path) -> None:
    """Migrate the fresh ``database``: a copy of the empty migrated template of the same schema digest when
    there is one (``templates`` folder, in the site's VAR_DIR), else migrated here and kept as that template."""
    from django.core.management import call_command
    from django.db import connection

    template = templates / f"empty-{schema_digest()}.sqlite3"
    if template.exists():
        shutil.copyfile(template, database)
        return
    call_command("migrate", verbosity=0, interactive=False)
    templates.mkdir(parents=True, exist_ok=True)
    partial = templates / f".{template.name}.{os.getpid()}"
    with connection.cursor() as cursor:
        cursor.execute("VACUUM INTO %s", [str(partial)])
    os.replace(partial, template)


def main(package: Path, sha256: str, out_dir: Path, templates: Path, endpoint_file: Path | None,
         max_size: int, confirmed: Path | None = None) -> int:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.conf import settings

    from analysis.replication.archive import Limits, PackageRefused, package_bytes, sha256_hex
    from analysis.replication.manifest import read_checked

    limits = Limits.of_size(max_size)
    try:
        data = package_bytes(package, limits)
        if sha256_hex(data) != sha256:
            raise PackageRefused([f"{package}: not the package the parent checked"])
        files = read_checked(data, limits)
    except PackageRefused as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 3
    database = Path(str(settings.DATABASES["default"]["NAME"]))
    scratch = package.resolve().parent
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3" or scratch not in database.resolve().parents:
        print(f"refused: the scratch database must be a SQLite file in {scratch}", file=sys.stderr)
        return 3
    migrated(database, templates)

    from analysis.replication.loading import PackageDataError, load_package

    try:
        meta = json.loads(files["package.json"])
        assert isinstance(meta, dict)
    except (KeyError, ValueError, AssertionError):
        print("cannot load the package: package.json is missing or not a JSON object", file=sys.stderr)
        return 2
    try:
        study = load_package(files)
    except PackageDataError as exc:
        print(f"cannot load the package: {exc}", file=sys.stderr)
        return 2
    out_dir.mkdir(parents=True, exist_ok=True)
    endpoint = None
    if endpoint_file is not None:
        from elicitation.models import ModelEndpoint

        spec = json.loads(endpoint_file.read_text(encoding="utf-8"))
        endpoint = ModelEndpoint.objects.create(**{**spec, "name": f"rerun-{spec['name']}"[:50]})
    if confirmed is not None and endpoint is not None:  # the second pass: the confirmed requests, nothing else
        from analysis.replication.rerun import PlanRefused, rerun

        try:
            rows = rerun(study, endpoint, json.loads(confirmed.read_text(encoding="utf-8")))
        except PlanRefused as exc:
            print(f"refused, nothing sent: {exc}", file=sys.stderr)
            return 2
        (out_dir / "rerun.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
        return 0
    write_report(study, meta, out_dir)
    if endpoint is not None:  # the first pass: what a rerun would send, for the parent to show and confirm
        from analysis.replication.rerun import plan

        (out_dir / "rerun_plan.json").write_text(json.dumps(plan(study, endpoint), indent=1), encoding="utf-8")
    return 0


def write_report(study: Any, meta: dict[str, Any], out_dir: Path) -> None:
    """The recomputed report's files in ``out_dir``, as the package holds them (respondent ids unsalted)."""
    from analysis.replication.package import report_files
    from analysis.reports import build_report
    from surveys.models import Participant
    from surveys.respondent_ids import hashed_id

    stamp = str(meta.get("data_as_of", ""))
    report = build_report(study, pool_versions=bool(meta.get("pool_versions"))).seen_by(False)
    if stamp:
        report = replace(report, generated_at=datetime.fromisoformat(stamp))
    loaded = [study.pk] + ([study.reference_study_id] if study.reference_study_id else [])
    back = {hashed_id(pid): pid
            for pid in Participant.objects.filter(study__in=loaded).values_list("prolific_pid", flat=True)}
    for name, data in report_files(report, stamp, images=False).items():
        if name == "report/report.json":
            data = json.dumps(unsalted(json.loads(data), back), indent=1, ensure_ascii=False, sort_keys=True).encode()
        target = out_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="analysis.replication.scratch")
    parser.add_argument("package", type=Path)
    parser.add_argument("sha256")
    parser.add_argument("out", type=Path)
    parser.add_argument("templates", type=Path)
    parser.add_argument("--max-size", type=int, default=2048)
    parser.add_argument("--endpoint", type=Path)
    parser.add_argument("--confirmed", type=Path, help="the confirmed plan: send its requests (no report)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    a = arguments(sys.argv[1:])
    sys.exit(main(a.package, a.sha256, a.out, a.templates, a.endpoint, a.max_size, a.confirmed))
