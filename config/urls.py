"""URL map: admin, participant pages, REST API and its documentation, health check."""
from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from .favicon import favicon
from .health import health

urlpatterns = [
    path("", RedirectView.as_view(url="/admin/", permanent=False)),
    path("admin/", admin.site.urls),
    path("healthz", health, name="health"),
    path("favicon.ico", favicon, name="favicon"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    path("api/", include("config.api_urls")),
    # the browsable API's log in and log out (a staff user's session; scripts send a token instead)
    path("api-auth/", include("rest_framework.urls")),
    path("", include("surveys.urls")),
]

handler400 = "config.errors.bad_request"
handler404 = "config.errors.not_found"
handler500 = "config.errors.server_error"
