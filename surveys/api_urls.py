"""REST API for studies, items, participants and responses."""
from django.urls import include, path
from rest_framework.routers import DefaultRouter

from . import api

router = DefaultRouter()
router.register("studies", api.StudyViewSet)
router.register("items", api.ItemViewSet)
router.register("participants", api.ParticipantViewSet)
router.register("responses", api.ResponseViewSet)

urlpatterns = [path("", include(router.urls))]
