"""What the running `make run` (bin/run-platform) keeps in the var directory for commands run in another
terminal: the address it serves on (``site-url``, kept after it stops) and the networks its model endpoints may
reach (``model-endpoint-allowed-networks``, removed when it stops)."""
from __future__ import annotations

from pathlib import Path

ALLOWED_NETWORKS = "model-endpoint-allowed-networks"


def read(var_dir: Path, name: str) -> str:
    """The stripped contents of ``<var>/<name>``, or "" when there is no such file."""
    try:
        return (var_dir / name).read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def allowed_networks(environment_value: str, var_dir: Path) -> list[str]:
    """``MODEL_ENDPOINT_ALLOWED_NETWORKS``: the variable when it is set; else the
    networks of the `make run` serving from this var directory, so that ``add_endpoint`` and ``elicit`` run in
    another terminal reach the same endpoints (the bundled local model, a stub on loopback) as its web server
    and worker; else none."""
    value = environment_value.strip() or read(var_dir, ALLOWED_NETWORKS)
    return [part.strip() for part in value.split(",") if part.strip()]
