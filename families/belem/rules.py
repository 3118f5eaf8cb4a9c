"""The exclusion rule of the family: Belem et al.'s ranking rule, the attention filter (no Django import: the
definition schema validates against it; attention.py computes it)."""
from __future__ import annotations

from surveys.definition.exclusion_rules import Param, RuleSpec

BELEM_RANKING = RuleSpec(
    "belem-ranking", "Belem et al.'s ranking rule: Spearman ρ between a participant's answers and the "
    "labels' mean ranking at or below `threshold` (SPEC §6)",
    (Param("threshold", float, "ρ must be above this to keep the participant", default=0.2, low=-1, high=1),),
    shapes=("scale",), needs_expressions=True, judge="families.belem.attention:judge", judges_nobody_done=True,
    attention_filter=True, outcome="families.belem.attention:compute_attention_filter")
