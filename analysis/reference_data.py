"""Public reference data the walkthroughs need, fetched on demand from its source with a pinned SHA-256 and cached
(pooch): the core's (the Fagen-Ulmschneider survey) and those the installed families contribute (config.registry,
kind ``datasets``; e.g. a paper's stimuli).

The cache is ``settings.REFERENCE_DATA_DIR`` (``var/data``), laid out as ``<folder>/<file>``. With
``settings.REFERENCE_DATA_MIRROR`` set, files come from ``<mirror>/<folder>/<file>`` instead of the public source
(tests and CI: a loopback server over ``../shared/data``), through the same code and the same checksums."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from config import registry


@dataclass(frozen=True)
class DataFile:
    name: str     # file name in the dataset's folder
    url: str      # public source, pinned to a commit
    sha256: str


@dataclass(frozen=True)
class Dataset:
    name: str      # the fetch_data argument
    folder: str    # folder under the cache (and the mirror)
    title: str
    source: str    # where it is published
    licence: str
    citation: str
    files: tuple[DataFile, ...]
    next_step: str  # what to do with it, printed after the fetch ({path} = the first file)


FAGEN_COMMIT = "d588d8f527f04771f8d3cc630cc29da53024cbc0"

CORE_DATASETS: dict[str, Dataset] = {d.name: d for d in (
    Dataset(
        name="fagen-ulmschneider",
        folder="fagen-ulmschneider-2015",
        title="Perception of Probability Words survey: 123 respondents × 17 probability words (0–100)",
        source="https://github.com/wadefagen/datasets/tree/master/Perception-of-Probability-Words",
        licence="no licence is stated at the source; the author publishes it for reuse and asks projects to link "
                "back. Cite it, and ask the author before redistributing the file.",
        citation="Fagen-Ulmschneider, W. (2015). Perception of Probability Words [survey data]. "
                 "https://waf.cs.illinois.edu/visualizations/Perception-of-Probability-Words/",
        files=(DataFile("survey-results.csv",
                        "https://raw.githubusercontent.com/wadefagen/datasets/"
                        f"{FAGEN_COMMIT}/Perception-of-Probability-Words/survey-results.csv",
                        "9fe1e4fbb463c04a3dbbf430dd5b094a9717e99263d55b9e4cb2c60e3c8ee285"),),
        next_step=".venv/bin/python manage.py import_wide STUDY {path}",
    ),
)}


def datasets() -> dict[str, Dataset]:
    """Every dataset ``fetch_data`` knows by name: the core's, then the installed families' (config.registry)."""
    return CORE_DATASETS | {name: registry.get("datasets", name) for name in registry.names("datasets")}


class FetchError(Exception):
    """A file could not be fetched, or its checksum is not the pinned one; nothing was cached."""


def file_url(dataset: Dataset, file: DataFile) -> str:
    """Where the file is read from: the mirror when one is configured, else the public source."""
    mirror = settings.REFERENCE_DATA_MIRROR.rstrip("/")
    return f"{mirror}/{dataset.folder}/{file.name}" if mirror else file.url


def _copy_local(url: str, output_file, pooch_obj) -> None:
    """A pooch downloader for a mirror on this machine (``file:///path`` or a plain folder): copies the file;
    pooch then checks its SHA-256 as for a download."""
    source = Path(url.removeprefix("file://"))
    if not source.is_file():
        raise FileNotFoundError(f"no such file in the mirror folder: {source}")
    data = source.read_bytes()
    if isinstance(output_file, (str, Path)):
        Path(output_file).write_bytes(data)
    else:
        output_file.write(data)


def _downloader(url: str):
    """The pooch downloader for ``url``: HTTP(S), or a copy for a local mirror."""
    import pooch

    if url.startswith(("http://", "https://")):
        return pooch.HTTPDownloader(progressbar=False, timeout=60)
    return _copy_local


def fetch(dataset: Dataset) -> list[Path]:
    """The dataset's files in the cache, downloaded first when missing or not matching their pinned SHA-256.
    A download whose checksum differs is refused (FetchError) and not kept."""
    import pooch  # only this command needs it

    pooch.get_logger().setLevel("WARNING")
    folder = Path(settings.REFERENCE_DATA_DIR) / dataset.folder
    paths = []
    for file in dataset.files:
        url = file_url(dataset, file)
        try:
            path = pooch.retrieve(url, known_hash=f"sha256:{file.sha256}", fname=file.name, path=folder,
                                  downloader=_downloader(url))
        except ValueError as exc:
            if "hash" in str(exc).lower():
                raise FetchError(f"{url}: checksum mismatch, refused and not kept (expected SHA-256 {file.sha256}; "
                                 f"{exc})") from exc
            raise FetchError(f"{url}: {exc}") from exc
        except Exception as exc:  # requests' connection errors, HTTP errors, a mirror without the file
            raise FetchError(f"could not download {url}: {exc}; nothing was cached") from exc
        paths.append(Path(path))
    return paths
