"""OpenAPI post-processing: every operation documents the error answers the API gives (drf-spectacular hook).

Views document their own successful answers and the errors specific to them (409 for a run that cannot
start, 400 with the rows of a failed import); this adds the answers every route can give: 400 (validation:
field → messages; beside a route's own 400), 401/403 (no token, not staff or missing the model permission)
and 404 (unknown id).
"""
from __future__ import annotations

ERROR_SCHEMA = {
    "type": "object",
    "description": "`detail` with the reason, or one list of messages per field that was refused.",
    "additionalProperties": True,
}
DEFAULT_ERRORS = {
    "400": "Refused: the reason, or the messages per field.",
    "401": "No or invalid credentials.",
    "403": "Not a staff user, or without the model permission of this action.",
    "404": "No such object.",
}


def add_error_responses(result: dict, generator, request, public) -> dict:
    for path in result.get("paths", {}).values():
        for method, operation in path.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            responses = operation.setdefault("responses", {})
            for code, text in DEFAULT_ERRORS.items():
                responses.setdefault(code, {"description": text,
                                            "content": {"application/json": {"schema": ERROR_SCHEMA}}})
            # a route's own 400 (e.g. an import's rows) is given beside the field messages any route can give
            own = responses["400"].get("content", {}).get("application/json", {})
            if own.get("schema", ERROR_SCHEMA) is not ERROR_SCHEMA and "anyOf" not in own["schema"]:
                own["schema"] = {"anyOf": [own["schema"], ERROR_SCHEMA]}
    return result
