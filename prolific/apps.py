from django.apps import AppConfig


class ProlificConfig(AppConfig):
    name = "prolific"
    verbose_name = "Prolific"
    default_auto_field = "django.db.models.BigAutoField"
