"""REST API routes of every app, under /api/: one router, so the API root lists every collection."""
from django.urls import include, path
from rest_framework.routers import DefaultRouter

from elicitation import api as elicitation_api
from prolific import api as prolific_api
from surveys import api as surveys_api

router = DefaultRouter()
router.register("studies", surveys_api.StudyViewSet)
router.register("items", surveys_api.ItemViewSet)
router.register("participants", surveys_api.ParticipantViewSet)
router.register("responses", surveys_api.ResponseViewSet)
router.register("endpoints", elicitation_api.ModelEndpointViewSet)
router.register("runs", elicitation_api.ElicitationRunViewSet)
router.register("model-responses", elicitation_api.ModelResponseViewSet)
router.register("prolific/studies", prolific_api.ProlificStudyViewSet)
router.register("prolific/submissions", prolific_api.SubmissionViewSet)

urlpatterns = [
    path("", include("analysis.api_urls")),
    path("", include(router.urls)),
]
