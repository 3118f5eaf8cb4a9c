"""The combined export's formats, content types and file name: light constants for the API's schema and the
admin, kept apart from analysis.exports so that naming a format does not import pandas and pyarrow."""
from __future__ import annotations

FORMATS = ("csv", "parquet")
CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "parquet": "application/vnd.apache.parquet"}


def export_filename(study, fmt: str) -> str:
    return f"{study.slug}-answers.{fmt}"


def package_filename(study) -> str:
    """The replication package's download name (analysis/replication/package.py)."""
    return f"{study.slug}-replication.zip"


#: The codebook beside the export (analysis/codebook.py): CSV, JSON and Markdown.
CODEBOOK_FORMATS = ("csv", "json", "md")
CODEBOOK_CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "json": "application/json",
                          "md": "text/markdown; charset=utf-8"}


def codebook_filename(study, fmt: str) -> str:
    return f"{study.slug}-codebook.{fmt}"
