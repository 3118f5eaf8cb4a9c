from django.apps import AppConfig


class SurveysConfig(AppConfig):
    name = "surveys"
    verbose_name = "Studies and participants"
    default_auto_field = "django.db.models.BigAutoField"
