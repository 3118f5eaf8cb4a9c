"""Which Study and Item columns a definition file sets (the loader writes them, the export reads them back)."""
from __future__ import annotations

from surveys.models import Item

#: Study columns a definition sets: (definition table, key) → Study field.
STUDY_FIELDS: dict[tuple[str, str], str] = {
    ("study", "title"): "title", ("study", "participant_title"): "participant_title",
    ("study", "language"): "language", ("study", "kind"): "instrument",
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
#: Item columns an item file or [[demonstrations]] entry sets by name (other fields go to Item.extra)
NOT_FIELDS = frozenset({"id", "study", "source_row"})
ITEM_COLUMNS = tuple(f.name for f in Item._meta.concrete_fields if f.name not in NOT_FIELDS)
