"""Tang et al.'s two item designs, declared apart from their generators (design_rq1.py, design_rq2.py) so that
listing the installed designs (``generate_items --help``, the API's schema) imports neither generator."""
from __future__ import annotations

from surveys.designs.design import Design

RQ1 = Design("tang-rq1", "families.tang.design_rq1", "wep_probability",
             "Tang et al. RQ1: the 17 WEPs in context settings CNC/ENC/FCNC/MCNC, English or Chinese")
RQ2 = Design("tang-rq2", "families.tang.design_rq2", "wep_choice",
             "Tang et al. RQ2: 360 WEP-choice items (scenario × choices × numbers × confidence × interval)")
