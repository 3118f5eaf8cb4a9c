"""manage.py fetch_data (issue 23 point 4): the same code that downloads from the public sources, pointed at a
loopback server over ../shared/data (never the network): pinned checksums, cache, refusal of a mismatch."""
from __future__ import annotations

import hashlib
import io
import re
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from analysis.reference_data import datasets

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def mirror():
    """A loopback HTTP server over a folder (default ../shared/data); yields (set_folder, requests served)."""
    served: list[str] = []
    state = {"folder": SHARED_DATA}

    class Handler(QuietHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(state["folder"]), **kwargs)

        def do_GET(self):
            served.append(self.path)
            super().do_GET()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state, served
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def configured(settings, tmp_path, mirror):
    url, state, served = mirror
    settings.REFERENCE_DATA_DIR = tmp_path / "cache"
    settings.REFERENCE_DATA_MIRROR = url
    return tmp_path / "cache", state, served


def fetch_data(*args: str) -> str:
    out = io.StringIO()
    call_command("fetch_data", *args, stdout=out)
    return out.getvalue()


def test_fetches_the_fagen_survey_prints_provenance_and_caches_it(configured):
    cache, _, served = configured
    printed = fetch_data("fagen-ulmschneider")
    cached = cache / "fagen-ulmschneider-2015" / "survey-results.csv"
    assert cached.read_bytes() == (SHARED_DATA / "fagen-ulmschneider-2015" / "survey-results.csv").read_bytes()
    assert "source:   https://github.com/wadefagen/datasets" in printed
    assert "licence:  no licence is stated at the source" in printed
    assert "cite:     Fagen-Ulmschneider, W. (2015). Perception of Probability Words" in printed
    assert f"import_wide STUDY {cached}" in printed
    assert served == ["/fagen-ulmschneider-2015/survey-results.csv"]

    fetch_data("fagen-ulmschneider")  # cached and checked: not downloaded again
    assert len(served) == 1


def test_the_pinned_checksums_are_those_of_the_belem_stimuli(configured):
    cache, _, _ = configured
    printed = fetch_data("belem-stimuli")
    for name in ("non-verifiable.csv", "verifiable.csv"):
        assert (cache / "belem2024-stimuli" / name).read_bytes() == (SHARED_DATA / "belem2024-stimuli" / name).read_bytes()
    assert "doi.org/10.18653/v1/2024.emnlp-main.483" in printed


def test_a_checksum_mismatch_is_refused_and_nothing_is_kept(configured, tmp_path):
    cache, state, _ = configured
    tampered = tmp_path / "tampered" / "fagen-ulmschneider-2015"
    tampered.mkdir(parents=True)
    original = (SHARED_DATA / "fagen-ulmschneider-2015" / "survey-results.csv").read_bytes()
    (tampered / "survey-results.csv").write_bytes(original.replace(b"60,85,80", b"60,85,81", 1))
    state["folder"] = tmp_path / "tampered"
    with pytest.raises(CommandError, match="checksum mismatch, refused and not kept"):
        fetch_data("fagen-ulmschneider")
    assert not any(cache.rglob("*.csv"))


def test_a_cached_file_that_changed_is_fetched_again(configured):
    cache, _, served = configured
    fetch_data("fagen-ulmschneider")
    cached = cache / "fagen-ulmschneider-2015" / "survey-results.csv"
    cached.write_bytes(b"edited by hand\n")
    fetch_data("fagen-ulmschneider")
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == datasets()["fagen-ulmschneider"].files[0].sha256
    assert len(served) == 2


def test_an_unreachable_source_is_a_clear_error(settings, tmp_path):
    settings.REFERENCE_DATA_DIR = tmp_path
    settings.REFERENCE_DATA_MIRROR = "http://127.0.0.1:9"  # discard port: connection refused, on loopback
    with pytest.raises(CommandError, match=r"could not download http://127.0.0.1:9/fagen-ulmschneider-2015/"
                                           r"survey-results.csv: .*nothing was cached"):
        fetch_data("fagen-ulmschneider")
    with pytest.raises(CommandError, match="no dataset 'bogus'; known: belem-stimuli, fagen-ulmschneider"):
        fetch_data("bogus")


def test_without_a_mirror_the_public_sources_are_pinned_to_commits(settings):
    settings.REFERENCE_DATA_MIRROR = ""
    from analysis.reference_data import file_url
    for dataset in datasets().values():
        for file in dataset.files:
            url = file_url(dataset, file)
            assert url.startswith("https://") and ("/raw/36c371b/" in url or "/d588d8f527f0" in url), url


@pytest.mark.django_db
def test_the_tang_rq1_walkthrough_fetches_the_survey_it_imports(configured):
    """The walkthrough's commands (docs/tutorials/tang.md) in order, the cache moved to a temporary folder."""
    cache, _, _ = configured
    text = (ROOT / "docs" / "tutorials" / "tang.md").read_text(encoding="utf-8")
    lines = [line.split("#")[0].split() for line in text.splitlines() if line.startswith(".venv/bin/python manage.py")]
    fetch_at = next(i for i, words in enumerate(lines) if words[2] == "fetch_data")
    create_at, import_at = (next(i for i, words in enumerate(lines) if words[2:4] == [command, "fagen"])
                            for command in ("create_study", "import_wide"))
    assert fetch_at < import_at and create_at < import_at
    default_cache = ROOT / "var" / "data"  # REFERENCE_DATA_DIR's default, VAR_DIR/data (a test worker has its own VAR_DIR)
    documented = ROOT / lines[import_at][4]
    assert documented.parent.parent == default_cache

    for i in (fetch_at, create_at, import_at):
        args = lines[i][3:]
        if i == import_at:
            args = [args[0], str(cache / documented.relative_to(default_cache))]
        call_command(lines[i][2], *args, stdout=io.StringIO())
    from surveys.models import Study
    assert Study.objects.get(slug="fagen").participants.count() == 123


@pytest.mark.parametrize("form", ["file-url", "folder"])
def test_a_mirror_folder_on_this_machine_is_read_and_checked(settings, tmp_path, form):
    """REFERENCE_DATA_MIRROR may name a folder on this machine (file:///path or /path), as a copy of the data
    without internet (walk of issue 23: file:// answered "No connection adapters were found")."""
    mirror = tmp_path / "mirror"
    (mirror / "fagen-ulmschneider-2015").mkdir(parents=True)
    original = (SHARED_DATA / "fagen-ulmschneider-2015" / "survey-results.csv").read_bytes()
    (mirror / "fagen-ulmschneider-2015" / "survey-results.csv").write_bytes(original)
    settings.REFERENCE_DATA_DIR = tmp_path / "cache"
    settings.REFERENCE_DATA_MIRROR = f"file://{mirror}" if form == "file-url" else str(mirror)
    assert "checked" in fetch_data("fagen-ulmschneider")
    assert (tmp_path / "cache" / "fagen-ulmschneider-2015" / "survey-results.csv").read_bytes() == original

    (tmp_path / "cache" / "fagen-ulmschneider-2015" / "survey-results.csv").unlink()
    (mirror / "fagen-ulmschneider-2015" / "survey-results.csv").write_bytes(original + b"x,1\n")
    with pytest.raises(CommandError, match="checksum mismatch"):
        fetch_data("fagen-ulmschneider")
    assert not (tmp_path / "cache" / "fagen-ulmschneider-2015" / "survey-results.csv").exists()
    (mirror / "fagen-ulmschneider-2015" / "survey-results.csv").unlink()
    with pytest.raises(CommandError, match="no such file in the mirror folder"):
        fetch_data("fagen-ulmschneider")


GITHUB_FILE = re.compile(r"https://(?:raw\.githubusercontent\.com/(?P<repo1>[\w.-]+/[\w.-]+)/(?P<ref1>[0-9a-f]{7,40})"
                         r"|github\.com/(?P<repo2>[\w.-]+/[\w.-]+)/raw/(?P<ref2>[0-9a-f]{7,40}))/(?P<path>[\w./-]+)")
GITHUB_FOLDER = re.compile(r"https://github\.com/(?P<repo>[\w.-]+/[\w.-]+)/tree/(?P<ref>[\w.-]+)/(?P<path>[\w./-]+)")
FILES = [(dataset, file) for dataset in datasets().values() for file in dataset.files]


@pytest.mark.parametrize("dataset, file", FILES, ids=[f"{d.name}/{f.name}" for d, f in FILES])
def test_each_public_url_is_the_documented_source_and_its_pin_is_the_served_copys_hash(dataset, file):
    """Offline: the real URL (never fetched here) is a well-formed https address of a file pinned to a commit, in
    the repository and folder the dataset names as its source and the how-to documents; and the pinned SHA-256 is
    that of the copy the other tests serve, so a wrong pin fails here, naming the file."""
    parts = urlsplit(file.url)
    assert parts.scheme == "https" and parts.netloc and not parts.query and not parts.fragment, file.url
    assert file.url == quote(file.url, safe=":/"), f"{file.url}: characters that need quoting"
    found = GITHUB_FILE.fullmatch(file.url)
    assert found, f"{file.url}: not a GitHub file pinned to a commit"
    repo, ref = found["repo1"] or found["repo2"], found["ref1"] or found["ref2"]
    source = GITHUB_FOLDER.fullmatch(dataset.source)
    assert source, f"{dataset.name}: source {dataset.source} is not a GitHub folder"
    assert repo == source["repo"] and found["path"] == f"{source['path']}/{file.name}", (file.url, dataset.source)
    assert source["ref"] in (ref, "master", "main"), (dataset.source, ref)  # the pinned commit, or the branch
    howto = (ROOT / "docs" / "howto" / "import-export.md").read_text(encoding="utf-8")
    documented = next(line for line in howto.splitlines() if line.startswith(f"| `{dataset.name}` |"))
    assert repo in documented, f"docs/howto/import-export.md names another source for {dataset.name}: {documented}"
    served = SHARED_DATA / dataset.folder / file.name
    assert hashlib.sha256(served.read_bytes()).hexdigest() == file.sha256, f"{served}: pinned SHA-256 differs"
