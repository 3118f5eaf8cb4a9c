"""WSGI entry point (gunicorn): Django's application, reading every request body to its end before the answer
goes out (config/request_body.py)."""
import os

from django.core.wsgi import get_wsgi_application

from config.request_body import DrainRequestBody

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = DrainRequestBody(get_wsgi_application())
