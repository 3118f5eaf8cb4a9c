"""MkDocs hook: the command reference (docs/reference/commands.md) generated from the commands' own --help, so it
can never drift from the code. Every manage.py command of the platform's apps, then the Django and library
commands the pages use."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PAGE = "reference/commands.md"
APPS = {"surveys": "Studies, items and participants", "elicitation": "Language models",
        "analysis": "Analysis: imports, reports, exports, reference data", "prolific": "Prolific"}
BASE_OPTIONS = {"--version", "--verbosity", "--settings", "--pythonpath", "--traceback", "--no-color",
                "--force-color"}


def setup_django() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    django.setup()


def help_text(name: str, app: str) -> str:
    """The command's --help without Django's common options (one note on the page says them once)."""
    from django.core.management import load_command_class
    command = load_command_class(app, name)
    command.suppressed_base_arguments = BASE_OPTIONS
    command.requires_system_checks = []  # drops --skip-checks from the help
    os.environ["COLUMNS"] = "110"  # the same line breaks on every machine
    return command.create_parser("manage.py", name).format_help().strip()


def used_in_pages(docs_dir: Path) -> set[str]:
    """Names of the commands the pages run (`manage.py NAME`)."""
    names: set[str] = set()
    for page in docs_dir.rglob("*.md"):
        names.update(re.findall(r"manage\.py\s+([a-z_]+)", page.read_text(encoding="utf-8")))
    return names


def commands_markdown(docs_dir: Path) -> str:
    """The generated part of the page: one section per command, grouped by app."""
    setup_django()
    from django.core.management import get_commands
    commands = get_commands()
    ours = {name: app for name, app in commands.items() if app.split(".")[-1] in APPS}
    out = []
    for app_label, title in APPS.items():
        names = sorted(name for name, app in ours.items() if app.split(".")[-1] == app_label)
        if not names:
            continue
        out.append(f"## {title}\n")
        out += [f"### {name}\n\n```text\n{help_text(name, ours[name])}\n```\n" for name in names]
    others = sorted(name for name in used_in_pages(docs_dir) if name in commands and name not in ours)
    out.append("## Django and library commands used in these pages\n")
    out += [f"### {name}\n\nFrom `{commands[name]}`.\n\n```text\n{help_text(name, commands[name])}\n```\n"
            for name in others]
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    return markdown.rstrip() + "\n\n" + commands_markdown(Path(config["docs_dir"]))
