"""The member names a replication package may hold, as ``package.py`` writes them, and nothing else: ``reproduce``
accepts a zip only when every member is one of these (issue 30, point 1). A name is never used as a path: the
package is read from the zip into memory, so an accepted name only says which file of the format it is.

- ``MANIFEST``, ``package.json``, ``dependencies.txt``;
- ``definition/study.toml``, ``definition/items.jsonl``; ``data/<table>.jsonl`` for each of :data:`DATA_TABLES`;
- ``report/report.json``, ``report/<name>.csv``, ``report/figures/<name>.png|.svg|.json`` (``<name>``: letters,
  digits, ``_``, ``-``, ``.``, not starting with a dot, no ``..``);
- ``export/answers.csv``, ``export/codebook.csv|.json|.md``: the combined export and its codebook (:data:`EXPORT_FILES`);
- ``reference/<slug>/definition/…`` and ``reference/<slug>/data/…``: the same definition and data files of the
  reference study (``<slug>``: a study slug).
"""
from __future__ import annotations

import re

MANIFEST = "MANIFEST"
#: the folder of the reference study's files (``reference/<slug>/definition/…``, ``…/data/…``)
REFERENCE_DIR = "reference"
#: the definition's files (surveys/definition/export.py writes study.toml and items.jsonl)
DEFINITION_FILES = ("study.toml", "items.jsonl")
#: the data tables, ``data/<table>.jsonl`` (analysis/replication/rows.py says what each holds)
DATA_TABLES = ("item_ids", "versions", "channels", "participants", "human_answers", "unanswered_slots", "runs",
               "model_answers", "prompts")
TOP_FILES = (MANIFEST, "package.json", "dependencies.txt")
#: the combined export and its codebook (package.py: export_files)
EXPORT_FILES = ("export/answers.csv", "export/codebook.csv", "export/codebook.json", "export/codebook.md")
STUDY_FILES = tuple(f"definition/{name}" for name in DEFINITION_FILES) + tuple(f"data/{t}.jsonl" for t in DATA_TABLES)

_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,199}"
_SLUG = r"[A-Za-z0-9_\-]{1,100}"
_REPORT = re.compile(rf"report/(?:report\.json|{_NAME}\.csv|figures/{_NAME}\.(?:png|svg|json))")
_REFERENCE = re.compile(rf"{REFERENCE_DIR}/{_SLUG}/(.+)")
_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


def member_problem(name: str) -> str | None:
    """Why ``name`` is not a member of a replication package (None when it is one)."""
    if "\\" in name:
        return "a backslash in the name (a package uses '/' only)"
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return "an absolute path"
    if ".." in name.split("/"):
        return "a '..' part (outside the package)"
    if _UNPRINTABLE.search(name):
        return "a control or non-ASCII character in the name"
    if name in TOP_FILES or name in STUDY_FILES or name in EXPORT_FILES:
        return None
    if _REPORT.fullmatch(name) and ".." not in name:
        return None
    reference = _REFERENCE.fullmatch(name)
    if reference and reference.group(1) in STUDY_FILES:
        return None
    return "not a file of a replication package (see docs/howto/replication-package.md)"
