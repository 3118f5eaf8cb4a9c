"""Issue 23 point 14: a report is built once per version of the data it reads, and its figures are rendered
once; a new or changed answer, a run or a setting gives a new version (no stale report)."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import reverse

import analysis.reports as reports
from analysis.report_cache import data_version
from elicitation.models import ElicitationRun
from surveys.models import Participant
from test_analysis_factories import attentive, nv_and_v


@pytest.fixture
def studies(imported_nv, belem_dir):
    return nv_and_v(imported_nv, belem_dir)


@pytest.fixture
def counted(monkeypatch):
    """How often reports are built and figures rendered."""
    calls = {"build": 0, "png": 0, "files": 0}

    def counting(name, real):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(reports, "build_report", counting("build", reports.build_report))
    monkeypatch.setattr(reports, "png_data_uri", counting("png", reports.png_data_uri))
    monkeypatch.setattr(reports, "figure_bytes", counting("files", reports.figure_bytes))
    return calls


def test_the_admin_report_is_built_and_drawn_once_per_data_version(client, studies, counted):
    nv, _ = studies
    client.force_login(User.objects.create_superuser("boss", "b@example.org", "pw"))
    url = reverse("admin:analysis_studyanalysis_report", args=[nv.pk])
    first = client.get(url).content.decode()
    drawn = counted["png"]
    assert counted["build"] == 1 and drawn > 0
    again = client.get(url).content.decode()
    json_url = reverse("admin:analysis_studyanalysis_report_json", args=[nv.pk])
    assert client.get(json_url).status_code == 200
    assert counted == {"build": 1, "png": drawn, "files": 0}
    assert again.count("data:image/png;base64,") == first.count("data:image/png;base64,") == drawn

    # a participant returned (an UPDATE, no signal): a new version, a new report
    Participant.objects.filter(study=nv, prolific_pid="nv3").update(status=Participant.Status.RETURNED)
    client.get(url)
    assert counted["build"] == 2 and counted["png"] == 2 * drawn


@pytest.mark.parametrize("change", ["new participant", "participant returned", "run cancelled", "threshold"])
def test_the_data_version_follows_what_the_report_reads(studies, change):
    import random

    nv, v = studies
    before = data_version(v)  # v's report reads nv (its reference) too
    if change == "new participant":
        attentive(nv, "late", random.Random(1))
    elif change == "participant returned":
        Participant.objects.filter(study=nv, prolific_pid="nv3").update(status=Participant.Status.RETURNED)
    elif change == "run cancelled":
        ElicitationRun.objects.filter(study=nv).update(status="cancelled")
    else:
        type(nv).objects.filter(pk=nv.pk).update(attention_threshold=0.5)
    assert data_version(v) != before
    assert data_version(v) == data_version(v)


def test_the_report_command_renders_the_figures_once(studies, counted, tmp_path):
    _, v = studies
    call_command("report", "v", "--out", str(tmp_path / "a"))
    files = counted["files"]
    assert counted["build"] == 1 and files > 0
    call_command("report", "v", "--out", str(tmp_path / "b"))
    assert counted["build"] == 1 and counted["files"] == files
    for name in ("report.json", *(p.name for p in (tmp_path / "a").glob("*.png"))):
        if name != "report.json":
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert len(list((tmp_path / "b").glob("*.svg"))) == len(list((tmp_path / "b").glob("*.png"))) > 0


def test_a_package_of_the_same_data_draws_its_report_once(studies, counted, monkeypatch):
    """Packaging is deterministic: a second package of unchanged data (another download, the API, the command)
    takes the report files of the first instead of drawing every figure again; new data draws anew."""
    from analysis.replication import package

    nv, _ = studies
    drawn = []
    real = package.figure_bytes
    monkeypatch.setattr(package, "figure_bytes", lambda fig: drawn.append(fig) or real(fig))
    first = package.package_zip(nv)
    figures = len(drawn)
    assert counted["build"] == 1 and figures > 0
    assert package.package_zip(nv) == first and counted["build"] == 1 and len(drawn) == figures
    Participant.objects.filter(study=nv, prolific_pid="nv3").update(status=Participant.Status.RETURNED)
    assert package.package_zip(nv) != first and counted["build"] == 2 and len(drawn) == 2 * figures


def test_a_change_to_a_familys_code_gives_a_new_data_version(studies, tmp_path):
    """The families' sections, metrics and figures are report code too (they left analysis/ for families/):
    a deployment changing one builds its reports anew instead of serving the cached ones."""
    import os
    from pathlib import Path

    import families.belem.figures as figures
    from analysis import report_cache

    nv, _ = studies
    path = Path(figures.__file__)
    kept = path.stat()
    report_cache.code_stamp.cache_clear()
    before = data_version(nv)
    try:
        os.utime(path, ns=(kept.st_atime_ns, int(report_cache.code_stamp()) + 10**9))
        report_cache.code_stamp.cache_clear()
        assert data_version(nv) != before
    finally:
        os.utime(path, ns=(kept.st_atime_ns, kept.st_mtime_ns))
        report_cache.code_stamp.cache_clear()
    assert data_version(nv) == before
