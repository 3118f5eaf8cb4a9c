"""REST API routes of every app, under /api/."""
from django.urls import include, path

urlpatterns = [
    path("", include("surveys.api_urls")),
    path("", include("elicitation.api_urls")),
    path("", include("analysis.api_urls")),
]
