"""StudyVersion.current_since: which version is current no longer follows from the numbers alone (a load that
returns to an earlier version's content makes that version current again, issue 32). Existing versions get
their creation time, and each study's newest version stays current."""
from django.db import migrations, models
from django.db.models import Max
import django.utils.timezone


def backfill(apps, schema_editor):
    StudyVersion = apps.get_model("surveys", "StudyVersion")
    latest = {}
    for version in StudyVersion.objects.order_by("study_id", "number"):
        StudyVersion.objects.filter(pk=version.pk).update(current_since=version.created_at)
        latest[version.study_id] = version.pk
    for study_id, pk in latest.items():
        top = StudyVersion.objects.filter(study_id=study_id).aggregate(top=Max("created_at"))["top"]
        StudyVersion.objects.filter(pk=pk).update(current_since=top)


class Migration(migrations.Migration):

    dependencies = [
        ('surveys', '0018_study_participant_title'),
    ]

    operations = [
        migrations.AddField(
            model_name='studyversion',
            name='current_since',
            field=models.DateTimeField(default=django.utils.timezone.now, help_text="When this version last became the study's current one: when it was made, or when a load returned the study to its content."),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
