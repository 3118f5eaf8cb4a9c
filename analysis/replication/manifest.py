"""The package's MANIFEST (one ``<sha256>  <name>`` line per file, sorted by name) and a deterministic zip: entries
in name order, each dated 1980-01-01 with the same permissions, so packaging the same data twice gives the same
bytes. :func:`read_checked` refuses a zip whose files do not match its MANIFEST, before anything is read from it."""
from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path
from typing import IO

MANIFEST = "MANIFEST"
FIXED_DATE = (1980, 1, 1, 0, 0, 0)


class ManifestError(Exception):
    """The zip does not match its MANIFEST; ``problems`` name each file."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def manifest_text(files: dict[str, bytes]) -> str:
    """One ``<sha256>  <name>`` line per file (the sha256sum format: ``sha256sum -c MANIFEST`` checks a
    folder the zip was extracted into)."""
    return "".join(f"{sha256(files[name])}  {name}\n" for name in sorted(files))


def parse_manifest(text: str) -> dict[str, str]:
    """name → sha256 from a MANIFEST; ValueError naming the line that is not ``<64 hex>  <name>``."""
    out: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or not name:
            raise ValueError(f"{MANIFEST} line {n}: not '<sha256>  <file>': {line[:80]!r}")
        out[name] = digest
    return out


def zip_bytes(files: dict[str, bytes]) -> bytes:
    """The zip of ``files`` plus their MANIFEST, deterministic (fixed dates and permissions, sorted names)."""
    everything = {**files, MANIFEST: manifest_text(files).encode()}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(everything):
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, everything[name])
    return buffer.getvalue()


def read_checked(source: str | Path | IO[bytes]) -> dict[str, bytes]:
    """Every file of the package but the MANIFEST, after checking each against it: ManifestError naming every
    changed, missing or extra file (nothing is returned then)."""
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ManifestError([f"{source}: not a zip file ({exc})"]) from None
    with archive:
        names = archive.namelist()
        if MANIFEST not in names:
            raise ManifestError([f"{MANIFEST}: missing from the package"])
        try:
            listed = parse_manifest(archive.read(MANIFEST).decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ManifestError([str(exc)]) from None
        files = {name: archive.read(name) for name in names if name != MANIFEST and not name.endswith("/")}
    problems = [f"{name}: changed (SHA-256 {sha256(data)[:12]}…, the MANIFEST says {listed[name][:12]}…)"
                for name, data in sorted(files.items()) if name in listed and sha256(data) != listed[name]]
    problems += [f"{name}: missing (listed in the MANIFEST)" for name in sorted(set(listed) - set(files))]
    problems += [f"{name}: extra (not in the MANIFEST)" for name in sorted(set(files) - set(listed))]
    if len(names) != len(set(names)):
        problems += [f"{name}: stored more than once" for name in sorted({n for n in names if names.count(n) > 1})]
    if problems:
        raise ManifestError(problems)
    return files
