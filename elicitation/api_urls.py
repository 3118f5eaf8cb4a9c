"""REST API routes for elicitation: /api/endpoints/, /api/runs/, /api/model-responses/."""
from django.urls import include, path
from rest_framework.routers import SimpleRouter

from . import api

router = SimpleRouter()
router.register("endpoints", api.ModelEndpointViewSet)
router.register("runs", api.ElicitationRunViewSet)
router.register("model-responses", api.ModelResponseViewSet)

urlpatterns = [path("", include(router.urls))]
