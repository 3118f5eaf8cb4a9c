"""Tang et al. RQ1 with the authors' per-setting files (issue 33.2–3): one wide ``Results - *.csv`` per model and
setting, imported with ``--set context=…`` under one model name, makes one agent with several settings, so the
report pairs the settings (she vs he, he vs CNC, English vs Chinese) and the models (GPT vs ERNIE in Chinese); the
report option ``orientation`` (the shipped Tang definitions: the authors') names which sample is X, and KL is given
both ways."""
from __future__ import annotations

import csv
import io
import zlib

import numpy as np
import pytest
from django.core.management import call_command

from analysis.agents import choose_runs
from surveys.answer_import import import_wide
from surveys.answer_bins import equal_width_index
from analysis.reports import build_report
from surveys.definition.files import shipped_definition
from families.tang.orientation import AUTHORS
from surveys.models import Study
from test_analysis_importers import FAGEN

pytestmark = pytest.mark.django_db

WEPS = ["almost certain", "highly likely", "very good chance", "probable", "likely", "we believe", "probably",
        "better than even", "about even", "we doubt", "improbable", "unlikely", "probably not", "little chance",
        "almost no chance", "highly unlikely", "chances are slight"]
BASE = dict(zip(WEPS, (.95, .9, .85, .7, .75, .75, .7, .6, .5, .25, .15, .2, .25, .1, .02, .05, .1)))


def value(file: str, wep: str, column: int) -> float:
    """A probability 0–1 written with two decimals, different per file, WEP and column."""
    jitter = (zlib.crc32(f"{file}|{wep}|{column}".encode()) % 21 - 10) / 100
    return round(min(1.0, max(0.0, BASE[wep] + jitter)), 2)


def authors_file(path, contexts: int, chinese: bool = False):
    """A file as the authors publish it: a header of context sentences, Avg and Std (the Chinese files' header is
    blank), one row per WEP — 32 in theirs; here the 17 of the survey and one more — with answers 0–1, "na" for none."""
    header = [""] + ([""] * contexts if chinese else [f"this person does thing {i}." for i in range(contexts)] + ["Avg", "Std"])
    rows = []
    for wep in ["always", *WEPS]:
        cells = [value(path.name, wep, c) if wep in BASE else 1 for c in range(contexts)]
        if wep == "probable" and chinese:
            cells[3] = "na"
        rows.append([wep, *cells, *([] if chinese else [round(float(np.mean(cells)), 3), 0.1])])
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([header, *rows])
    return path


def answers(path, wep: str, contexts: int) -> np.ndarray:
    return np.array([value(path.name, wep, c) * 100 for c in range(contexts) if not (wep == "probable" and c == 3
                                                                                     and "chinese" in path.name)])


def kl(x: np.ndarray, y: np.ndarray) -> float:
    """D(X‖Y) on Tang's 20 bins, empty bins of Y 1e−10 (the authors' definition)."""
    p = np.bincount(equal_width_index(x, 20, 100), minlength=20) / len(x)
    q = np.bincount(equal_width_index(y, 20, 100), minlength=20) / len(y)
    q = np.where(q == 0, 1e-10, q)
    return float(sum(pi * np.log(pi / qi) for pi, qi in zip(p, q) if pi > 0))


def test_the_tutorials_commands_on_the_authors_files_give_every_published_pair(tmp_path):
    out = io.StringIO()
    call_command("create_study", "fagen", "--instrument", "wep_probability", stdout=out)
    import_wide(Study.objects.get(slug="fagen"), FAGEN)
    call_command("create_study", "tang-rq1", "--instrument", "wep_probability", "--reference", "fagen", stdout=out)
    call_command("generate_items", "tang-rq1", "--design", "tang-rq1", "--contexts", "CNC,FCNC,MCNC", stdout=out)
    call_command("generate_items", "tang-rq1", "--design", "tang-rq1", "--contexts", "CNC", "--language", "zh", stdout=out)
    files = {  # file → (model, context, language, columns)
        "Results - short_context_gpt-4.csv": ("gpt-4", "CNC", "en", 15),
        "Results - single-gender-statement(He)gpt-4.csv": ("gpt-4", "MCNC", "en", 10),
        "Results - single-gender-statement(She)gpt-4.csv": ("gpt-4", "FCNC", "en", 10),
        "Results - short_context_chinese_gpt4.csv": ("gpt-4", "CNC", "zh", 15),
        "Results - short_context_chinese_baidu.csv": ("ernie-4.0", "CNC", "zh", 15),
    }
    paths = {}
    for name, (model, context, language, columns) in files.items():
        paths[name] = authors_file(tmp_path / name, columns, chinese=language == "zh")
        call_command("import_model_answers", "tang-rq1", str(paths[name]), "--model", model, "--shape", "wide",
                     "--set", f"context={context}", "--set", f"language={language}", stdout=out)
    study = Study.objects.get(slug="tang-rq1")
    uses = choose_runs(study, "nv")
    assert [u.agent for u in uses if u.used].count("gpt-4 (greedy)") == 4  # one agent, four settings
    assert all(u.used for u in uses)

    # the authors' orientation, as the shipped definitions set it
    assert shipped_definition("tang-rq1/study.toml")["report"]["options"]["orientation"] == AUTHORS
    assert shipped_definition("tang-rq1-zh/study.toml")["report"]["options"]["orientation"] == AUTHORS
    call_command("report", "tang-rq1", "--option", f"orientation={AUTHORS}", "--no-figures", "--out",
                 str(tmp_path / "r"), stdout=out)
    report = build_report(Study.objects.get(slug="tang-rq1"))
    pairs = report.tables()["tang_pairs"]
    oriented = set(zip(pairs["x"], pairs["y"]))
    published = {  # the authors' Gender and Chinese tables: X first
        ("gpt-4 (greedy) · MCNC (en)", "gpt-4 (greedy) · FCNC (en)"),   # GPT-4-Male v.s. GPT-4-Female
        ("gpt-4 (greedy) · MCNC (en)", "gpt-4 (greedy) · CNC (en)"),    # GPT-4-Male v.s. GPT-4-CNC
        ("gpt-4 (greedy) · CNC (en)", "gpt-4 (greedy) · CNC (zh)"),     # "Chinese v.s. English": X English
        ("gpt-4 (greedy) · CNC (zh)", "ernie-4.0 (greedy) · CNC (zh)"),  # GPT-4-Chinese v.s. ERNIE-4.0-Chinese
    }
    assert published <= oriented
    # KL both ways beside each other, from the files' own numbers
    row = pairs.set_index(["x", "y", "label"]).loc[("gpt-4 (greedy) · MCNC (en)", "gpt-4 (greedy) · FCNC (en)", "likely")]
    he = answers(paths["Results - single-gender-statement(He)gpt-4.csv"], "likely", 10)
    she = answers(paths["Results - single-gender-statement(She)gpt-4.csv"], "likely", 10)
    assert row["kl"] == pytest.approx(kl(he, she)) and row["kl_yx"] == pytest.approx(kl(she, he))
    assert row["kl"] != pytest.approx(row["kl_yx"])  # not symmetric: the orientation matters
    # ERNIE against people: the model is X (ERNIE-4.0-Chinese v.s. Human); GPT against people keeps people X
    tang = report.tables()["tang"].set_index(["agent", "setting", "label"]).sort_index()
    assert set(tang.loc["ernie-4.0 (greedy)", "x"]) == {"model"} and set(tang.loc["gpt-4 (greedy)", "x"]) == {"people"}
    ernie = tang.loc[("ernie-4.0 (greedy)", "CNC (zh)", "probable")]
    assert ernie["n_model"] == 14  # one "na" left out
    assert "orientation" in report.titles()["tang_pairs"]

    # without the option: X is the first in sort order (CNC before FCNC before MCNC, en before zh, ernie before gpt)
    study.report_options = {}
    study.save()
    default = build_report(study).tables()["tang_pairs"]
    unordered = set(zip(default["x"], default["y"]))
    assert ("gpt-4 (greedy) · FCNC (en)", "gpt-4 (greedy) · MCNC (en)") in unordered
    assert ("ernie-4.0 (greedy) · CNC (zh)", "gpt-4 (greedy) · CNC (zh)") in unordered


def test_orientation_rules_are_checked_and_match_settings_languages_and_agents():
    from django.core.management.base import CommandError

    from families.tang.orientation import Sample, first_is_x

    call_command("create_study", "o", "--instrument", "wep_probability", stdout=io.StringIO())
    with pytest.raises(CommandError, match="report option 'orientation': 'MCNC FCNC' is not a rule 'A vs B'"):
        call_command("report", "o", "--option", "orientation=MCNC FCNC", stdout=io.StringIO())
    he, she = Sample("gpt-4 (greedy)", "MCNC", "en"), Sample("gpt-4 (greedy)", "FCNC", "en")
    cnc = Sample("gpt-4 (greedy)", "CNC", "en")
    assert first_is_x(he, she, AUTHORS) is True and first_is_x(she, he, AUTHORS) is False
    assert first_is_x(cnc, he, AUTHORS) is False          # "CNC" names the setting, not a part of "MCNC"
    assert first_is_x(she, cnc, AUTHORS) is None          # not published: the default order
    assert first_is_x(Sample("gpt-4 (greedy)", "CNC", "zh"), Sample(""), AUTHORS) is None  # GPT vs people
    assert first_is_x(Sample("ernie-4.0 (greedy)", "CNC", "zh"), Sample(""), AUTHORS) is True
