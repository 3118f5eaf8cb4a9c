from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    verbose_name = "Analysis"
    default_auto_field = "django.db.models.BigAutoField"
