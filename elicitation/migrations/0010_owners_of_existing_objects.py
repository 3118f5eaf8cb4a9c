"""Give existing studies and endpoints an owner (access.ownership): the user who added it in the admin (the
admin's log), else the user who started its first run, else the first superuser; none when there is no user
(then superusers only, until a superuser sets one)."""
from django.db import migrations


def _added_by(apps, model_name: str, app_label: str) -> dict[int, int]:
    LogEntry = apps.get_model("admin", "LogEntry")
    ContentType = apps.get_model("contenttypes", "ContentType")
    try:
        ct = ContentType.objects.get(app_label=app_label, model=model_name)
    except ContentType.DoesNotExist:
        return {}
    out: dict[int, int] = {}
    for object_id, user_id in (LogEntry.objects.filter(content_type=ct, action_flag=1)
                               .order_by("-action_time").values_list("object_id", "user_id")):
        if str(object_id).isdigit():
            out[int(object_id)] = user_id  # the earliest addition wins (iterated last)
    return out


def _first_runs(Run, field: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for owner_id, user_id in (Run.objects.filter(created_by__isnull=False).order_by("-created_at", "-pk")
                              .values_list(field, "created_by_id")):
        out[owner_id] = user_id
    return out


def give_owners(apps, schema_editor):
    User = apps.get_model("auth", "User")
    Study = apps.get_model("surveys", "Study")
    Endpoint = apps.get_model("elicitation", "ModelEndpoint")
    Run = apps.get_model("elicitation", "ElicitationRun")
    first_superuser = (User.objects.filter(is_superuser=True, is_active=True).order_by("pk")
                       .values_list("pk", flat=True).first())
    for model, app_label, field in ((Study, "surveys", "study_id"), (Endpoint, "elicitation", "endpoint_id")):
        added, runs = _added_by(apps, model._meta.model_name, app_label), _first_runs(Run, field)
        for obj in model.objects.filter(owner__isnull=True):
            owner = added.get(obj.pk) or runs.get(obj.pk) or first_superuser
            if owner is not None:
                model.objects.filter(pk=obj.pk).update(owner_id=owner)


class Migration(migrations.Migration):
    dependencies = [
        ("elicitation", "0009_owner_and_sharing"),
        ("surveys", "0014_owner_and_sharing"),
        ("admin", "0003_logentry_add_action_flag_choices"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(give_owners, migrations.RunPython.noop)]
