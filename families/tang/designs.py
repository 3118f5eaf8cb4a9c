"""Tang et al.'s two item designs, declared apart from their generators (design_rq1.py, design_rq2.py) so that
listing the installed designs (``generate_items --help``, the API's schema) imports neither generator."""
from __future__ import annotations

from surveys.designs.design import CliOption, Design

RQ1 = Design("tang-rq1", "families.tang.design_rq1", "wep_probability",
             "Tang et al. RQ1: the 17 WEPs in context settings CNC/ENC/FCNC/MCNC, English or Chinese",
             # Django's own --settings (the settings module) is read by manage.py itself, so the context settings
             # are --contexts.
             cli=(CliOption("--contexts", "context settings, comma-separated (CNC,ENC,FCNC,MCNC; default all four)",
                            key="settings", case="upper"),
                  CliOption("--language", "language of the contexts", choices=("en", "zh"))))
RQ2 = Design("tang-rq2", "families.tang.design_rq2", "wep_choice",
             "Tang et al. RQ2: 360 WEP-choice items (scenario × choices × numbers × confidence × interval)",
             cli=(CliOption("--seed", "random seed of the NUMBERS draw", type=int),
                  CliOption("--numbers", "'paper' for the authors' two NUMBERS sets (the narrow set of the Methods "
                            "and the wide set they used), or a file with the two sets (narrow, then wide), 20 "
                            "numbers each, one set per line")))
