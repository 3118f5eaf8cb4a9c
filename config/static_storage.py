"""Static files storage for production mode (DEBUG off)."""
from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class ManifestOrPlainStorage(CompressedManifestStaticFilesStorage):
    """WhiteNoise's hashed, compressed names from the manifest that ``collectstatic`` writes; before it has run
    (or for a file it did not collect), the plain name, which WhiteNoise serves from the apps' static folders
    (``WHITENOISE_USE_FINDERS``) — instead of Django's 500 "Missing staticfiles manifest entry"."""

    def stored_name(self, name: str) -> str:
        try:
            return super().stored_name(name)
        except ValueError:
            return name
