"""Study definition files: a study's whole protocol as data (schema, templates, loading, export, versions).

- ``schema``: the pydantic models of a definition file (and its JSON Schema);
- ``templates``: the Jinja2 wording templates (sandboxed, strict);
- ``items_file``: the item files a definition names (CSV/JSONL), read with line and column in errors;
- ``loader``: a file to a study, all or nothing (``manage.py load_study``);
- ``export``: a study back to its file (``manage.py export_study``);
- ``versions``: content hashes and the study's versions.
"""
