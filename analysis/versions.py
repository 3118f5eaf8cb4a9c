"""Which definition versions a study's answers come from (issue 20, point 6), and the report's rule about them.

A human answer belongs to the version its participant saw (``Participant.study_version``), a model answer to the
version its run used (``ElicitationRun.study_version``); answers with no version (collected before versions
existed) form one "unversioned" group. The answers counted are the ones reports read: completed, non-test
participants' answers, and model answers that are answers (parsed or unparseable; analysis.agents).

A report reads answers of one version only: when a study's answers come from more than one group it refuses
(:class:`VersionsError`, naming each group and its answers) unless pooling is asked for (``report
--pool-versions``, ``?pool_versions=1`` on the API and the report page); then it says it pooled.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from django.db.models import Count

from analysis.agents import ANSWER_STATUSES
from analysis.report_sections import ReportError
from elicitation.models import ModelResponse
from surveys.models import Participant, Response, Study, StudyVersion

UNVERSIONED = "unversioned"


class VersionsError(ReportError):
    """The answers come from several versions and pooling was not asked for."""


@dataclass(frozen=True)
class VersionAnswers:
    """The answers of one study from one version (``number`` None: unversioned)."""

    study: str
    number: int | None
    sha256: str
    human_answers: int
    model_answers: int

    @property
    def name(self) -> str:
        return UNVERSIONED if self.number is None else f"v{self.number} ({self.sha256[:12]})"

    @property
    def answers(self) -> int:
        return self.human_answers + self.model_answers

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"version": self.name}

    def describe(self) -> str:
        return f"{self.name}: {self.human_answers} human and {self.model_answers} model answers"


def answer_versions(study: Study) -> list[VersionAnswers]:
    """The version groups of ``study``'s answers, oldest version first, unversioned last (none: no answers)."""
    humans = dict(Response.objects.filter(item__study=study, participant__status=Participant.Status.COMPLETED,
                                          participant__is_test=False)
                  .values_list("participant__study_version").annotate(n=Count("pk")).order_by())
    models = dict(ModelResponse.objects.filter(run__study=study, status__in=ANSWER_STATUSES, check_key="")
                  .values_list("run__study_version").annotate(n=Count("pk")).order_by())
    ids = set(humans) | set(models)
    versions = {v.pk: v for v in StudyVersion.objects.filter(pk__in=[i for i in ids if i is not None])}
    out = [VersionAnswers(study.slug, versions[i].number, versions[i].sha256, humans.get(i, 0), models.get(i, 0))
           for i in sorted(versions, key=lambda i: versions[i].number)]
    if None in ids:
        out.append(VersionAnswers(study.slug, None, "", humans.get(None, 0), models.get(None, 0)))
    return out


def report_versions(study: Study) -> list[VersionAnswers]:
    """The version groups of the studies a report reads: the reference study's (when there is one), then the
    study's own."""
    return [v for s in (study.reference_study, study) if s is not None for v in answer_versions(s)]


def check_versions(groups: list[VersionAnswers], pool: bool) -> None:
    """VersionsError when one study's answers come from several versions and ``pool`` is False."""
    by_study: dict[str, list[VersionAnswers]] = {}
    for group in groups:
        by_study.setdefault(group.study, []).append(group)
    mixed = {slug: parts for slug, parts in by_study.items() if len(parts) > 1}
    if not mixed or pool:
        return
    lines = "; ".join(f"study {slug!r} has answers from {len(parts)} versions: "
                      + ", ".join(p.describe() for p in parts) for slug, parts in mixed.items())
    raise VersionsError(f"{lines}. The report does not pool answers given to different versions: ask for it "
                        "explicitly (manage.py report SLUG --pool-versions; ?pool_versions=1 on the API and on the "
                        "report page), or collect the answers again under one version.")


def versions_meta(groups: list[VersionAnswers], pooled: bool) -> dict[str, Any]:
    """What report.json says about versions: each group, and whether answers of several were pooled."""
    studies = {g.study for g in groups}
    several = any(sum(1 for g in groups if g.study == s) > 1 for s in studies)
    return {"versions": [g.as_dict() for g in groups], "pooled_versions": bool(pooled and several)}
