"""MkDocs hook: the REST API's OpenAPI 3 schema, generated from the code (drf-spectacular, as /api/schema/
serves it), published with the site as reference/openapi.yaml so that the API page can link to it offline."""
from __future__ import annotations

from mkdocs.structure.files import File

from commands_reference import setup_django  # noqa: I001 (hooks are loaded from docs/hooks/)

PATH = "reference/openapi.yaml"


def schema_yaml() -> str:
    setup_django()
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiYamlRenderer
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return OpenApiYamlRenderer().render(schema, renderer_context={}).decode("utf-8")


def on_files(files, config):
    files.append(File.generated(config, PATH, content=schema_yaml()))
    return files
