"""A definition uploaded over the web is checked outside the request's worker first.

``POST /api/studies/``, ``POST /api/studies/definition/`` and the admin's upload (all through
``loader.load_as``) call :func:`check_isolated`: a child Python process (``python -m
surveys.definition.template_check``) reads the definition and its item files, renders every template of
``[page]`` and ``[prompt]`` over every item's fields within the template limits (template_limits.py) and reports
each template that passes a limit, naming its key. The child limits itself before it reads anything
(``resource.setrlimit``: ``DEFINITION_CHECK_CPU_SECONDS`` of CPU, ``DEFINITION_CHECK_MEMORY_MB`` of address
space) and the parent waits at most three times the CPU time plus 30 s; a child that is stopped or killed is a
clear problem (HTTP 400), and the web worker never computed anything of the templates. Only then does the loader run in the
worker, as before. A definition whose ``[page]`` and ``[prompt]`` hold no Jinja syntax needs no child.
"""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from django.conf import settings

from .errors import DefinitionError, Problem

ROOT = Path(__file__).resolve().parents[2]
#: Names the prompt assembly gives templates (loader.ASSEMBLY_NAMES), with stand-in values for the check.
ASSEMBLY_VALUES = {"wording": "", "demos": [], "question": "", "shots": [], "system": "", "with_answer": False,
                   "answer": "", "page": ""}


def limits() -> tuple[int, int]:
    """(CPU seconds, memory in MB) of the child."""
    return (int(getattr(settings, "DEFINITION_CHECK_CPU_SECONDS", 20)),
            int(getattr(settings, "DEFINITION_CHECK_MEMORY_MB", 1024)))


def check_isolated(raw: bytes, file: str, files: dict[str, bytes], slug: str | None = None) -> None:
    """DefinitionError naming each template of the definition that passes a limit on its items, or the child's
    CPU, memory or time limit; nothing when every template renders within them."""
    if not _has_templates(raw, file):
        return
    cpu, memory = limits()
    payload = json.dumps({"raw": base64.b64encode(raw).decode(), "file": file, "slug": slug, "cpu": cpu,
                          "memory": memory,
                          "files": {name: base64.b64encode(data).decode() for name, data in files.items()}})
    wall = 3 * cpu + 30  # the CPU limit is the bound; the wall clock only guards a starved machine

    def stop(why: str) -> DefinitionError:
        return DefinitionError([Problem(file, "", (
            f"the definition's templates could not be checked within the limits for a definition loaded over the "
            f"web ({cpu} s of CPU, {memory} MB: DEFINITION_CHECK_CPU_SECONDS, DEFINITION_CHECK_MEMORY_MB; the "
            f"check {why}): make them compute less, or load the file with manage.py load_study"))])

    try:
        done = subprocess.run([sys.executable, "-m", "surveys.definition.template_check"], input=payload.encode(),
                              capture_output=True, cwd=ROOT, timeout=wall, env=os.environ.copy())
    except subprocess.TimeoutExpired:
        raise stop(f"took more than {wall} s") from None
    if done.returncode != 0:
        signals = {-24: "used its CPU time (SIGXCPU)", -9: "was killed", 3: "ran out of memory"}
        raise stop(signals.get(done.returncode, f"failed (exit status {done.returncode}): "
                                                f"{done.stderr.decode(errors='replace')[-300:]}"))
    try:
        found = json.loads(done.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise stop("gave no answer") from None
    if found:
        raise DefinitionError([Problem(file, where, message) for where, message in found])


def _has_templates(raw: bytes, file: str) -> bool:
    """Whether ``[page]`` or ``[prompt]`` holds Jinja syntax (``{{``, ``{%``) the child must render: a definition
    without any (most; a file that does not parse is the loader's to refuse) costs no child process."""
    from .files import parse_toml

    try:
        data = parse_toml(raw.decode("utf-8"), file)
    except (DefinitionError, UnicodeDecodeError):
        return False
    return any(mark in text for text in _strings([data.get("page"), data.get("prompt")]) for mark in ("{{", "{%"))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def template_problems(raw: str, file: str, files: dict[str, bytes], slug: str | None) -> list[tuple[str, str]]:
    """(key path, message) of each template that passes a limit when rendered over the definition's items.
    Everything else (a missing field, a bad file) is left to the loader, which says it in full."""
    from surveys.instruments import get_instrument
    from surveys.models import Item, Study

    from .files import parse_toml, validate
    from .items_file import ITEM_COLUMNS
    from .loader import _items, _template_paths, uploaded_files
    from .templates import TemplateProblem, render

    try:
        definition = validate(parse_toml(raw, file), file)
    except DefinitionError:
        return []
    dump = definition.model_dump(mode="json")
    if slug:
        dump["study"]["slug"] = slug
    probe = Study(slug=dump["study"]["slug"], instrument=dump["study"]["kind"], definition=dump,
                  language=dump["study"]["language"])
    kind = get_instrument(probe.instrument).for_study(probe)

    try:
        rows, demos, _ = _items(definition, dump, kind, probe, file, uploaded_files(files))
    except Exception:  # a design that needs the database: its items are checked by the loader
        rows, demos = [], []
    templates = _template_paths(dump)
    found: dict[str, str] = {}
    for row in (rows + demos) or [{}]:
        context = dict(ASSEMBLY_VALUES) | {k: v for k, v in row.items() if k != "extra"} | (row.get("extra") or {})
        try:
            sample = Item(study=probe, **{k: v for k, v in row.items() if k in ITEM_COLUMNS})
            context |= kind.template_context(sample)
        except Exception:
            pass
        for path, template in templates:
            if path in found:
                continue
            try:
                render(template, context)
            except TemplateProblem as exc:
                if exc.limit:
                    found[path] = f"the template passes a limit{_item(row)}: {exc}"
    return sorted(found.items())


def _item(row: dict[str, Any]) -> str:
    return f" for item {row['key']!r}" if row.get("key") else ""


def main() -> None:
    """The child: limit itself, read the request from stdin, print the problems as JSON on the last line."""
    import resource

    request = json.loads(sys.stdin.buffer.read())
    cpu, memory = int(request["cpu"]), int(request["memory"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory * 1024 * 1024, memory * 1024 * 1024))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    files = {name: base64.b64decode(data) for name, data in request["files"].items()}
    raw = base64.b64decode(request["raw"]).decode("utf-8", "replace")
    try:
        found = template_problems(raw, request["file"], files, request.get("slug"))
    except MemoryError:
        sys.exit(3)
    print(json.dumps(found))


if __name__ == "__main__":
    main()
