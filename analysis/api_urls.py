"""REST routes of the analysis app, under /api/."""
from django.urls import path

from . import api

urlpatterns = [
    path("studies/<slug:slug>/report/", api.StudyReportView.as_view(), name="api-study-report"),
    path("studies/<slug:slug>/export/<str:fmt>/", api.StudyExportView.as_view(), name="api-study-export"),
    path("studies/<slug:slug>/codebook/<str:fmt>/", api.StudyCodebookView.as_view(), name="api-study-codebook"),
    path("studies/<slug:slug>/package/", api.StudyPackageView.as_view(), name="api-study-package"),
    path("studies/<slug:slug>/attention/", api.StudyAttentionView.as_view(), name="api-study-attention"),
]
