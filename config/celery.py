"""The Celery application; configuration comes from Django settings (CELERY_* names)."""
import os

from celery import Celery

from .broker_alias import install as install_sqlite_broker

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
install_sqlite_broker()  # sqla+ URLs (the default broker): a worker takes its next task as soon as one is acknowledged

app = Celery("hedgelab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
