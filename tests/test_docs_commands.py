"""Every command the documentation (docs/**/*.md and README.md) prints runs as printed from the repository root
after `make install`: it calls the virtualenv's programs (no activation needed), names a real management command,
make target or script, and its options parse with the command's own parser (no `<placeholder>`, `[optional]` or
`a|b` synopsis)."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PROGRAMS = (".venv/bin/python", ".venv/bin/celery", ".venv/bin/pip", "make")
SHELL_UTILITIES = ("cp", "mkdir", "ls", "unzip")  # file handling around the commands (copy a shipped study, …)


def page_commands(text: str) -> list[str]:
    """Command lines of one page: lines of ```bash blocks (continuations joined, comments dropped) and inline
    code (which may run over a line break) that starts with a program (`make …`, `.venv/bin/…`) or `manage.py`."""
    commands: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                commands.append(line)
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for span in re.findall(r"`([^`]+)`", prose):
        span = " ".join(span.split())
        if "…" in span:  # prose about commands in general, e.g. `.venv/bin/python manage.py …`
            continue
        if span.startswith(PROGRAMS + ("python ", "celery ", "pip ", "manage.py ")):
            commands.append(span)
    return commands


def words(command: str) -> list[str]:
    """The command's words without a trailing comment and leading VAR=value assignments."""
    parts = shlex.split(command, comments=True)
    while parts and re.fullmatch(r"[A-Z_]+=.*", parts[0]):
        parts.pop(0)
    return parts


def make_targets() -> set[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set()
    for line in makefile.splitlines():
        match = re.match(r"^([A-Za-z][\w ./-]*?)\s*:(?!=)", line)
        if match:
            targets.update(match.group(1).split())
    return targets


def docs_commands() -> list[str]:
    """Every page's commands, each once."""
    return list(dict.fromkeys(c for page in PAGES for c in page_commands(page.read_text(encoding="utf-8"))))


COMMANDS = docs_commands()


def test_the_docs_have_commands_to_check():
    assert sum("manage.py" in c for c in COMMANDS) > 25


def test_inline_code_over_a_line_break_is_a_command_too():
    text = "Create one (or `.venv/bin/python manage.py\nensure_admin --bogus`), then `make run`."
    assert page_commands(text) == [".venv/bin/python manage.py ensure_admin --bogus", "make run"]


@pytest.mark.parametrize("command", COMMANDS)
def test_docs_command_runs_as_printed(command):
    parts = words(command)
    assert parts, command
    if parts[0] == "hedgelab":  # an installed wheel's manage.py (docs/howto/deploy.md)
        parts = [".venv/bin/python", "manage.py", *parts[1:]]
    program = parts[0]
    if program in SHELL_UTILITIES:
        return
    assert program in PROGRAMS or program.startswith(".venv/bin/"), (
        f"{command!r} needs an activated virtualenv: call .venv/bin/{program} (or a make target)")
    synopsis = re.compile(r"^<[^>]*>$|^\[-|^\|$|\]$")  # <study>, [--option], a | b, …]
    assert not any(synopsis.search(p) for p in parts if p != "-e" and not p.startswith(".[")), (
        f"{command!r} is a synopsis, not a command")
    if program == "make":
        targets = [p for p in parts[1:] if "=" not in p]
        assert set(targets) <= make_targets(), f"{command!r}: no such make target"
        return
    if program != ".venv/bin/python":
        return
    if parts[1] == "-m":
        return
    script = ROOT / parts[1]
    assert script.exists(), f"{command!r}: no file {parts[1]}"
    if parts[1] != "manage.py":
        return
    name, args = parts[2], parts[3:]
    commands = get_commands()
    assert name in commands, f"{command!r}: no management command {name!r}"
    command_class = load_command_class(commands[name], name)
    parser = command_class.create_parser("manage.py", name)
    if "--help" in args:
        return  # prints the help and exits; the command exists
    parser.parse_args(args)  # CommandError (the test fails) on an unknown option or a missing argument


def short_commands(text: str) -> list[str]:
    """Inline code written as a whole command without its `.venv/bin/python manage.py` prefix: a management
    command's name, then a positional argument that is a real value (a slug or a path, not a `RUN`, `FILE` or
    `<study>` placeholder), e.g. `export hedge-confidence --format csv`. Mentions of an option alone
    (`elicit --resume RUN`) are prose, not commands."""
    names = set(get_commands())
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    found = []
    for span in re.findall(r"`([^`]+)`", prose):
        parts = " ".join(span.split()).split(" ")
        if (len(parts) > 1 and parts[0] in names and re.fullmatch(r"[a-z0-9][a-z0-9./_-]*", parts[1])
                and "…" not in span and not re.search(r"[<>|]|\b[A-Z]{2,}\b", span)):
            found.append(" ".join(parts))
    return found


SHORT_COMMANDS = list(dict.fromkeys(c for page in PAGES for c in short_commands(page.read_text(encoding="utf-8"))))


def test_a_short_inline_command_is_found():
    text = "The export (`export hedge-confidence --format csv`); resume with `elicit --resume RUN`, `report <study>`."
    assert short_commands(text) == ["export hedge-confidence --format csv"]


@pytest.mark.parametrize("command", SHORT_COMMANDS)
def test_a_short_inline_command_parses_as_written(command):
    """The walk of issue 32 typed the study-file tutorial's `export hedge-confidence --format csv`: refused,
    `--out` is required."""
    name, *args = words(command)
    parser = load_command_class(get_commands()[name], name).create_parser("manage.py", name)
    parser.parse_args(args)
