"""Participant-facing URLs: the study link, one page per step, and the researcher preview."""
from django.urls import path

from . import views

app_name = "surveys"

urlpatterns = [
    path("s/<slug:slug>/", views.entry, name="entry"),
    path("s/<slug:slug>/consent/", views.consent, name="consent"),
    path("s/<slug:slug>/instructions/", views.instructions, name="instructions"),
    path("s/<slug:slug>/pledge/", views.pledge, name="pledge"),
    path("s/<slug:slug>/about-you/", views.questionnaire_before, name="questionnaire_before"),
    path("s/<slug:slug>/question/", views.item, name="item"),
    path("s/<slug:slug>/check/", views.check_page, name="check"),
    path("s/<slug:slug>/about-you/last/", views.questionnaire_after, name="questionnaire_after"),
    path("s/<slug:slug>/done/", views.done, name="done"),
    path("s/<slug:slug>/preview/", views.preview, name="preview"),
]
