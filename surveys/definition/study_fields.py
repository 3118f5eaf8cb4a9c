"""Which Study columns a definition file sets (the loader writes them, the export reads them back)."""
from __future__ import annotations

#: Study columns a definition sets: (definition table, key) → Study field.
STUDY_FIELDS: dict[tuple[str, str], str] = {
    ("study", "title"): "title", ("study", "language"): "language", ("study", "kind"): "instrument",
    ("study", "description"): "description",
    ("texts", "consent"): "consent_text", ("texts", "instructions"): "instructions",
    ("texts", "pledge"): "pledge_text",
    ("participants", "items_per_participant"): "items_per_participant",
    ("participants", "items_per_expression"): "items_per_expression",
    ("participants", "controls_per_participant"): "controls_per_participant",
    ("participants", "draw_speaker_names"): "draw_speaker_names",
    ("participants", "attention_filter"): "attention_filter",
    ("participants", "attention_threshold"): "attention_threshold",
    ("participants", "idle_timeout_minutes"): "idle_timeout_minutes",
    ("report", "options"): "report_options",
}
#: the Prolific completion codes ([prolific] table), stored on the study under the same names
CODE_FIELDS = ("completion_code", "failed_attention_code", "screened_out_code")
