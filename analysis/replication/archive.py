"""Reading a replication package's zip without trusting it (issue 30, points 1 and 2): nothing is extracted, every
member is read into memory under its name, and only after

- the zip file is at most :attr:`Limits.total_bytes` (read in bounded chunks, hashed as it is read);
- it has at most :attr:`Limits.members` members (counted from its end record before its directory is parsed);
- every member's name is one the format defines (analysis/replication/layout.py), stored once (a set: linear),
  a regular file (no symbolic link or folder, from the zip's external attributes), not encrypted, stored or
  deflated;
- each member's declared size, and then the bytes actually decompressed (read in chunks of :data:`CHUNK`, so a
  lying header changes nothing), stay within :attr:`Limits.member_bytes`, :attr:`Limits.total_bytes` and
  :attr:`Limits.ratio` times its compressed size (a zip bomb is stopped at the first chunk over the limit).

Anything else is refused with :class:`PackageRefused`, naming each member and why.
"""
from __future__ import annotations

import hashlib
import io
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from analysis.replication.layout import member_problem

CHUNK = 1 << 20
#: members smaller than this are not held to the compression ratio (small text files compress oddly)
RATIO_FLOOR = 1 << 20
SHOWN = 20
MB = 1 << 20


class PackageRefused(Exception):
    """The package is not read: ``problems`` name each member (or the file) and why; ``heading`` says what kind."""

    heading = "the package is not a replication package this platform reads"

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems[:SHOWN]))

    def lines(self) -> list[str]:
        """The problems as the command prints them (the first :data:`SHOWN`, then how many more)."""
        more = len(self.problems) - SHOWN
        return self.problems[:SHOWN] + ([f"… and {more} more"] if more > 0 else [])


@dataclass(frozen=True)
class Limits:
    """How large a package ``reproduce`` reads (``--max-size MB`` sets the byte limits)."""

    members: int = 10_000
    member_bytes: int = 2048 * MB
    total_bytes: int = 2048 * MB
    ratio: int = 200

    @classmethod
    def of_size(cls, megabytes: int) -> Limits:
        return cls(member_bytes=megabytes * MB, total_bytes=megabytes * MB)


def package_bytes(source: str | Path | bytes | IO[bytes], limits: Limits = Limits()) -> bytes:
    """The zip file's bytes, read in chunks and refused once larger than ``limits.total_bytes``."""
    if isinstance(source, bytes):
        data = source
    else:
        opened = open(source, "rb") if isinstance(source, (str, Path)) else source  # noqa: SIM115
        try:
            parts, got = [], 0
            while chunk := opened.read(CHUNK):
                got += len(chunk)
                if got > limits.total_bytes:
                    raise PackageRefused([f"{source}: larger than {limits.total_bytes // MB} MB (--max-size)"])
                parts.append(chunk)
        except OSError as exc:
            raise PackageRefused([f"{source}: cannot be read ({exc})"]) from None
        finally:
            if opened is not source:
                opened.close()
        data = b"".join(parts)
    if len(data) > limits.total_bytes:
        raise PackageRefused([f"package: larger than {limits.total_bytes // MB} MB (--max-size)"])
    return data


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def entry_count(data: bytes) -> int | None:
    """The number of members the zip's end record declares (None when it has none: not a zip)."""
    try:
        end = zipfile._EndRecData(io.BytesIO(data))  # type: ignore[attr-defined]  # the record ZipFile reads too
        return None if end is None else int(end[zipfile._ECD_ENTRIES_TOTAL])  # type: ignore[attr-defined]
    except (AttributeError, OSError, zipfile.BadZipFile):  # pragma: no cover - another Python's zipfile
        return None


def entry_problem(info: zipfile.ZipInfo, limits: Limits) -> str | None:
    """Why the member ``info`` is refused before a byte of it is read (None when it is not)."""
    name = info.orig_filename
    if problem := member_problem(name):
        return problem
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        return "a symbolic link"
    if (kind and kind != stat.S_IFREG) or info.is_dir() or info.external_attr & 0x10:
        return "not a regular file"
    if info.flag_bits & 0x1:
        return "encrypted"
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return f"compression method {info.compress_type} (a package is stored or deflated)"
    if info.file_size > limits.member_bytes:
        return f"{info.file_size} bytes uncompressed, over the limit of {limits.member_bytes // MB} MB (--max-size)"
    if info.file_size > max(RATIO_FLOOR, limits.ratio * info.compress_size):
        return (f"expands {info.file_size} bytes from {info.compress_size} (over {limits.ratio} times): "
                "a zip bomb, not a package")
    return None


def read_members(data: bytes, limits: Limits = Limits()) -> dict[str, bytes]:
    """Every member of the zip ``data`` by name, after the checks above; PackageRefused naming every problem."""
    declared = entry_count(data)
    if declared is not None and declared > limits.members:
        raise PackageRefused([f"package: {declared} members, over the limit of {limits.members}"])
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise PackageRefused([f"package: not a zip file ({exc})"]) from None
    with archive:
        infos = archive.infolist()
        if len(infos) > limits.members:
            raise PackageRefused([f"package: {len(infos)} members, over the limit of {limits.members}"])
        problems, seen, total = [], set(), 0
        for info in infos:
            name = info.orig_filename
            if name in seen:
                problems.append(f"{name!r}: stored more than once")
                continue
            seen.add(name)
            if problem := entry_problem(info, limits):
                problems.append(f"{name!r}: {problem}")
            total += info.file_size
        if total > limits.total_bytes:
            problems.append(f"package: {total} bytes uncompressed, over the limit of {limits.total_bytes // MB} MB "
                            "(--max-size)")
        if problems:
            raise PackageRefused(problems)
        return _read_bounded(archive, infos, limits)


def _read_bounded(archive: zipfile.ZipFile, infos: list[zipfile.ZipInfo], limits: Limits) -> dict[str, bytes]:
    """Each member decompressed in chunks, stopped as soon as it or the total passes a limit."""
    files, total = {}, 0
    for info in infos:
        name, parts, got = info.orig_filename, [], 0
        most = min(limits.member_bytes, max(RATIO_FLOOR, limits.ratio * info.compress_size))
        try:
            with archive.open(info) as member:
                while chunk := member.read(CHUNK):
                    got += len(chunk)
                    total += len(chunk)
                    if got > most or total > limits.total_bytes:
                        raise PackageRefused([f"{name!r}: expands past {most if got > most else limits.total_bytes} "
                                              f"bytes from {info.compress_size} compressed (its header says "
                                              f"{info.file_size}): refused before reading the rest"])
                    parts.append(chunk)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError) as exc:
            raise PackageRefused([f"{name!r}: cannot be read ({exc})"]) from None
        files[name] = b"".join(parts)
    return files
