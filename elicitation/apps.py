from django.apps import AppConfig


class ElicitationConfig(AppConfig):
    name = "elicitation"
    verbose_name = "Model elicitation"
    default_auto_field = "django.db.models.BigAutoField"
