"""REST API routes of every app, under /api/: one router, so the API root lists every collection.
Permissions: config.permissions (staff + the model permission the admin uses for the same action)."""
from django.urls import include, path
from rest_framework.permissions import IsAdminUser
from rest_framework.routers import APIRootView, DefaultRouter

from elicitation import api as elicitation_api
from prolific import api as prolific_api
from surveys import api as surveys_api
from surveys import api_channels



class Root(APIRootView):
    """The list of collections (names only): any staff account; each collection checks its own permission."""

    permission_classes = [IsAdminUser]


router = DefaultRouter()
router.APIRootView = Root
router.register("studies", surveys_api.StudyViewSet)
router.register("items", surveys_api.ItemViewSet)
router.register("participants", surveys_api.ParticipantViewSet)
router.register("responses", surveys_api.ResponseViewSet)
router.register("channels", api_channels.ChannelViewSet)
router.register("endpoints", elicitation_api.ModelEndpointViewSet)
router.register("runs", elicitation_api.ElicitationRunViewSet)
router.register("model-responses", elicitation_api.ModelResponseViewSet)
router.register("prolific/studies", prolific_api.ProlificStudyViewSet)
router.register("prolific/submissions", prolific_api.SubmissionViewSet)

urlpatterns = [
    path("", include("analysis.api_urls")),
    path("studies/<slug:slug>/run-agents/", elicitation_api.RunAgentsView.as_view(), name="api-study-run-agents"),
    path("", include(router.urls)),
]
