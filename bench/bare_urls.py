"""The platform's URLs plus the bare view of bench/bare_site.py (the bench server's ROOT_URLCONF)."""
from django.urls import include, path

from bench.bare_site import bare

urlpatterns = [path("bench/bare/", bare), path("", include("config.urls"))]
