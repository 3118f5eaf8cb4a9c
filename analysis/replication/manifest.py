"""The package's MANIFEST (one ``<sha256>  <name>`` line per file, sorted by name) and a deterministic zip: entries
in name order, each dated 1980-01-01 with the same permissions, so packaging the same data twice gives the same
bytes. :func:`read_checked` reads a zip only as analysis/replication/archive.py allows (names the format defines,
limits on size and compression) and refuses one whose files do not match its MANIFEST.

The MANIFEST detects accidental change (a damaged download, a file edited by hand), not deliberate change:
whoever changes a file can write its MANIFEST again. A package is as trustworthy as where it came from; the hash of
the whole zip file, published apart from it (``reproduce --expect-sha256``), is what ties it to its source."""
from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path
from typing import IO

from analysis.replication.archive import Limits, PackageRefused, package_bytes, read_members
from analysis.replication.layout import MANIFEST

FIXED_DATE = (1980, 1, 1, 0, 0, 0)
__all__ = ["MANIFEST", "ManifestError", "manifest_text", "parse_manifest", "read_checked", "sha256", "zip_bytes"]


class ManifestError(PackageRefused):
    """The zip does not match its MANIFEST; ``problems`` name each file."""

    heading = "the package does not match its MANIFEST"


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


def read_checked(source: str | Path | bytes | IO[bytes], limits: Limits = Limits()) -> dict[str, bytes]:
    """Every file of the package but the MANIFEST, after checking each against it: PackageRefused for a zip that
    is not a package or passes ``limits`` (archive.py), ManifestError naming every changed, missing or extra file
    (nothing is returned then)."""
    files = read_members(package_bytes(source, limits), limits)
    if MANIFEST not in files:
        raise ManifestError([f"{MANIFEST}: missing from the package"])
    try:
        listed = parse_manifest(files.pop(MANIFEST).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ManifestError([str(exc)]) from None
    problems = [f"{name}: changed (SHA-256 {sha256(data)[:12]}…, the MANIFEST says {listed[name][:12]}…)"
                for name, data in sorted(files.items()) if name in listed and sha256(data) != listed[name]]
    problems += [f"{name}: missing (listed in the MANIFEST)" for name in sorted(set(listed) - set(files))]
    problems += [f"{name}: extra (not in the MANIFEST)" for name in sorted(set(files) - set(listed))]
    if problems:
        raise ManifestError(problems)
    return files
