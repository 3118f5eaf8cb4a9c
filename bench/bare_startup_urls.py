"""The bare project's URLs (bench/bare_startup_settings.py): Django's admin only."""
from django.contrib import admin
from django.urls import path

urlpatterns = [path("admin/", admin.site.urls)]
