"""Hot statements as SQL written once per process, with the ORM's own conversions on the way in and out.

Building a query with the ORM costs 1–5 ms of CPU (compilation, more than a short query itself takes); the
participant path (``surveys.flow_queries``) and the elicitation worker (``elicitation.row_sql``) write their
few hot statements once and keep everything else the ORM does: rows become model instances through the
fields' converters (``Columns``), and values are prepared for the database as an ORM UPDATE prepares them
(``assignments``).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Model


class Columns:
    """A model's concrete columns in a query under ``alias``, and how to turn their values into a model."""

    def __init__(self, model: type[Model], alias: str) -> None:
        self.model, self.alias = model, alias
        self.fields = list(model._meta.concrete_fields)
        self.names = [f.attname for f in self.fields]
        quote = connection.ops.quote_name
        self.sql = ", ".join(f"{alias}.{quote(f.column)}" for f in self.fields)

    def _converters(self) -> list[tuple[int, Any, list[Callable]]]:
        """The ORM's converters for these columns (backend's and fields' own), kept per connection object."""
        conn = connections[DEFAULT_DB_ALIAS]
        cache = conn.__dict__.setdefault("_hedgelab_converters", {})
        key = (self.model, self.alias)
        if key not in cache:
            found = []
            for i, f in enumerate(self.fields):
                expression = f.get_col(self.alias)
                converters = conn.ops.get_db_converters(expression) + expression.get_db_converters(conn)
                if converters:
                    found.append((i, expression, converters))
            cache[key] = found
        return cache[key]

    def build(self, row: Sequence[Any]) -> Model:
        values = list(row[:len(self.fields)])
        for i, expression, converters in self._converters():
            for converter in converters:
                values[i] = converter(values[i], expression, connection)
        return self.model.from_db(connection.alias, self.names, values)


def assignments(model: type[Model], values: dict[str, Any]) -> tuple[str, list[Any]]:
    """``column = %s, …`` and its parameters for an UPDATE of ``model`` setting ``values`` (field names; a related
    field takes the instance or its key), each value prepared as the ORM's UPDATE prepares it
    (``get_db_prep_save``, the field's placeholder, NULL for None)."""
    quote, parts, params = connection.ops.quote_name, [], []
    for name, value in values.items():
        field = model._meta.get_field(name)
        if field.remote_field is not None and isinstance(value, Model):
            value = value.pk
        value = field.get_db_prep_save(value, connection=connection)
        if value is None:
            parts.append(f"{quote(field.column)} = NULL")
            continue
        placeholder = field.get_placeholder(value, None, connection) if hasattr(field, "get_placeholder") else "%s"
        parts.append(f"{quote(field.column)} = {placeholder}")
        params.append(value)
    return ", ".join(parts), params
