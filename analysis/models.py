"""The analysis app stores nothing of its own: results live on the surveys and elicitation models.

``StudyAnalysis`` is a proxy of Study so that the admin has an "Analysis › Study reports" page
(report, combined export, importers of earlier data, attention filter) with its own permissions.
"""
from surveys.models import Study


class StudyAnalysis(Study):
    class Meta:
        proxy = True
        verbose_name = "study report"
        verbose_name_plural = "study reports"
