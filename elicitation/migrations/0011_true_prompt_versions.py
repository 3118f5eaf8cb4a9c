"""Runs created before a run's prompt version followed its prompt kept the field's default ``belem-2shot-v1``
whatever they sent. Give those the version of the prompt they sent (elicitation.prompt_versions.default_prompt_version):
zero-shot for the kinds whose prompts show no demonstrations, and for runs without ``few_shot`` or a study
without demonstrations. A version someone typed, and self-refinement runs, are left as they are. Report names
are unchanged: both versions count as defaults (analysis.agents)."""
from django.db import migrations

OLD = "belem-2shot-v1"
# kind → version prefix; the kinds whose prompts show the study's demonstrations (as the instruments declare)
PREFIX = {"speaker_belief": "belem", "wep_probability": "wep", "wep_choice": "tang-rq2",
          "interval_confidence": "bahaj", "verbalisation_choice": "sileo"}
SHOW_DEMONSTRATIONS = {"speaker_belief", "wep_probability"}


def true_versions(apps, schema_editor):
    Run = apps.get_model("elicitation", "ElicitationRun")
    Item = apps.get_model("surveys", "Item")
    for run in Run.objects.filter(prompt_version=OLD, refines__isnull=True).select_related("study"):
        kind = run.study.instrument
        shots = (Item.objects.filter(study_id=run.study_id, is_demonstration=True).count()
                 if run.few_shot and kind in SHOW_DEMONSTRATIONS else 0)
        prefix = PREFIX.get(kind, kind.replace("_", "-"))
        version = f"{prefix}-{shots}shot-v1" if shots else f"{prefix}-zero-shot-v1"
        if version != OLD:
            Run.objects.filter(pk=run.pk).update(prompt_version=version)


class Migration(migrations.Migration):
    dependencies = [
        ("elicitation", "0010_owners_of_existing_objects"),
        ("surveys", "0011_recruitment_channels"),
    ]

    operations = [migrations.RunPython(true_versions, migrations.RunPython.noop)]
