"""A template CSV of items for each kind: the columns the importer reads, required ones first in their fixed
order (``Instrument.import_columns``, then ``optional_columns``), with the kind's example rows. Served by
``manage.py item_template KIND`` and the admin's import page; a template imports as it is."""
from __future__ import annotations

import csv
import io

from .instruments import Instrument, get_instrument


def template_columns(kind: Instrument) -> list[str]:
    """The template's header: the required columns in their order, then the optional ones."""
    return [*kind.import_columns, *(c for c in kind.optional_columns if c not in kind.import_columns)]


def item_template(kind_name: str) -> str:
    """The template CSV (text) of the kind named ``kind_name``; KeyError names the known kinds."""
    kind = get_instrument(kind_name)
    columns = template_columns(kind)
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in kind.template_rows:
        writer.writerow({c: row.get(c, "") for c in columns})
    return out.getvalue()


def template_filename(kind_name: str) -> str:
    return f"{kind_name}-items-template.csv"
