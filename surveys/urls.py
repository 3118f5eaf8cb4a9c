"""Participant-facing URLs (filled in by the participant-flow work)."""
from django.urls import path

urlpatterns: list = []
