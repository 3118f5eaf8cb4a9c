"""A replication package is read, never extracted (issue 30, points 1 and 2): members whose names are not the
format's (``../x``, ``/abs/x``, ``definition/../x``, backslashes, a planted ``tomllib.py``), symbolic links and
duplicates are refused naming the member, with nothing written and no code run, even when the attacker wrote the
MANIFEST too; the child process imports nothing from its working folder or ahead of the standard library; a zip
bomb, too many members or too large a package is refused without being decompressed; ``--expect-sha256`` refuses
another package before anything is read."""
from __future__ import annotations

import hashlib
import io
import stat
import tempfile
import tracemalloc
import uuid
import warnings
import zipfile
from pathlib import Path

import pytest

from analysis.replication import reproduce as reproduce_module
from analysis.replication.archive import Limits, PackageRefused, read_members
from analysis.replication.layout import member_problem
from analysis.replication.manifest import manifest_text
from stub_openai import stub  # noqa: F401 (a fixture)
from test_replication_package import ROOT, packaged, reproduce, study  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db
VALID = {"package.json": b'{"format": 1}', "definition/study.toml": b'[study]\nslug = "x"\n',
         "data/runs.jsonl": b""}


def crafted(path: Path, members: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    """A zip of VALID's files plus ``members``, with a MANIFEST that lists them all (the attacker writes it)."""
    entries = [*VALID.items(), *members]
    listed = {(m.filename if isinstance(m, zipfile.ZipInfo) else m): data for m, data in entries}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for member, data in entries:
                archive.writestr(member, data)
            archive.writestr("MANIFEST", manifest_text(listed))
    return path


def symlink(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


@pytest.mark.parametrize("shape", ["parent", "absolute", "definition-parent", "backslash", "tomllib", "symlink",
                                   "duplicate", "unknown"])
def test_a_member_outside_the_format_is_refused_naming_it_with_nothing_written(shape, tmp_path, monkeypatch):
    unique = f"hedgelab-escape-{uuid.uuid4().hex}"
    escaped = [Path(tempfile.gettempdir()) / unique, tmp_path / "abs" / unique, ROOT / unique]
    payload = b"open(%r, 'w').write('ran')\n" % str(tmp_path / "ran").encode()
    name, members = {
        "parent": (f"../../{unique}", [(f"../../{unique}", b"x")]),
        "absolute": (str(tmp_path / "abs" / unique), [(str(tmp_path / "abs" / unique), b"x")]),
        "definition-parent": (f"definition/../../../{unique}", [(f"definition/../../../{unique}", b"x")]),
        "backslash": ("definition\\..\\..\\x", [("definition\\..\\..\\x", b"x")]),
        "tomllib": ("tomllib.py", [("tomllib.py", payload), (str(tmp_path / "project" / "tomllib.py"), payload)]),
        "symlink": ("data/prompts.jsonl", [(symlink("data/prompts.jsonl"), b"/etc/passwd")]),
        "duplicate": ("data/runs.jsonl", [("data/runs.jsonl", b'{"id": 1}\n')]),
        "unknown": ("data/more.jsonl", [("data/more.jsonl", b"{}\n")]),
    }[shape]
    started = []
    monkeypatch.setattr(reproduce_module.subprocess, "run", lambda *a, **k: started.append(a))
    path = crafted(tmp_path / "crafted.zip", members)

    printed, code = reproduce(path)
    assert code != 0 and "refused, nothing loaded" in printed, printed
    assert repr(name) in printed, printed
    assert not started  # no child process, so no code of the package's can run
    assert not any(p.exists() for p in escaped) and not (tmp_path / "project" / "tomllib.py").exists()
    assert not (tmp_path / "ran").exists()


def test_member_names_are_the_formats_own():
    for name in ("MANIFEST", "package.json", "dependencies.txt", "definition/study.toml", "data/prompts.jsonl",
                 "report/report.json", "report/generic_summary.csv", "report/figures/generic-by-gender.svg",
                 "reference/demo/definition/items.jsonl", "reference/demo/data/human_answers.jsonl"):
        assert member_problem(name) is None, name
    for name in ("../x", "/etc/x", "C:/x", "definition/../x", "definition\\x", "report/../x.csv", "report/.x.csv",
                 "report/figures/a..b.png", "reference/demo/report/report.json", "reference/../data/runs.jsonl",
                 "data/runs.jsonl/", "definition/other.toml", "report/figures/x.py", "tomllib.py", "data/r\0.jsonl",
                 "reference/a/b/data/runs.jsonl", ""):
        assert member_problem(name) is not None, name


def test_the_scratch_process_imports_nothing_planted_in_its_folders(packaged, tmp_path, monkeypatch):
    """A ``tomllib.py`` in the project's folder (planted some other way) is not what the child imports: the child
    runs with ``python -I`` from an empty folder, the project's folder after the standard library."""
    project = tmp_path / "project"
    project.mkdir()
    for entry in ROOT.iterdir():
        if not entry.name.startswith(".") or entry.name == ".venv":
            (project / entry.name).symlink_to(entry)
    marker = tmp_path / "attacker-code-ran"
    (project / "tomllib.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\nraise SystemExit(9)\n")
    monkeypatch.setattr(reproduce_module, "ROOT", project)

    printed, code = reproduce(packaged)
    assert code == 0, printed
    assert "no differences" in printed and not marker.exists()


def bomb(size: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("data/model_answers.jsonl", b"\0" * size)
    return buffer.getvalue()


def test_a_zip_bomb_is_refused_without_being_decompressed():
    data = bomb(300 << 20)
    assert len(data) < 1 << 20  # 300 MB in under 1 MB
    tracemalloc.start()
    with pytest.raises(PackageRefused) as refused:
        read_members(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "'data/model_answers.jsonl': expands 314572800 bytes" in str(refused.value)
    assert peak < 16 << 20


def test_a_member_is_read_in_chunks_and_stopped_at_the_limit():
    """Refused from its header first; and the reading itself counts the bytes actually decompressed, chunk by
    chunk, and stops at the first chunk past the limit (were a header to lie)."""
    from analysis.replication.archive import _read_bounded

    data = bomb(40 << 20)
    limits = Limits(member_bytes=8 << 20, total_bytes=8 << 20, ratio=10_000)
    with pytest.raises(PackageRefused, match="over the limit of 8 MB"):
        read_members(data, limits)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        tracemalloc.start()
        with pytest.raises(PackageRefused) as refused:
            _read_bounded(archive, archive.infolist(), limits)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert "expands past 8388608 bytes" in str(refused.value) and "refused before reading the rest" in str(refused.value)
    assert peak < 24 << 20


def test_too_many_members_or_too_large_a_package_is_refused(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for n in range(10_001):
            archive.writestr(f"report/figures/f{n}.json", b"")
    with pytest.raises(PackageRefused, match="10001 members, over the limit of 10000"):
        read_members(buffer.getvalue())
    path = tmp_path / "big.zip"
    path.write_bytes(b"\0" * (3 << 20))
    printed, code = reproduce(path, "--max-size", "2")
    assert code != 0 and "larger than 2 MB (--max-size)" in printed


def test_expect_sha256_refuses_another_package_before_reading_it(packaged, tmp_path):
    other = tmp_path / "not-a-zip.zip"
    other.write_bytes(b"not a zip at all")
    digest = hashlib.sha256(packaged.read_bytes()).hexdigest()
    printed, code = reproduce(other, "--expect-sha256", digest)
    assert code != 0 and "its SHA-256 differs" in printed and "not a zip" not in printed
    assert f"expected {digest}" in printed

    printed, code = reproduce(packaged, "--expect-sha256", digest.upper())
    assert code == 0, printed
    assert f"SHA-256 {digest} (as expected)" in printed and "no differences" in printed
