"""Test participants (is_test), declined consent (status "declined" + declined_at) and the Withdrawal audit model.

SQLite rebuilds the participant table for these changes (copy to a new table, drop, rename), and renaming
fails while the response triggers name surveys_participant ("error in trigger … no such table"); so on SQLite
the triggers are dropped first and created again, as 0005_typed_answers made them (every answer column), at the
end. PostgreSQL alters in place.
"""
from importlib import import_module

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

first = import_module("surveys.migrations.0003_response_integrity_triggers")
current = import_module("surveys.migrations.0005_typed_answers")
DROP = first._run({"sqlite": first.SQLITE_REVERSE})
CREATE = current._run({"sqlite": current.SQLITE})


class Migration(migrations.Migration):

    dependencies = [
        ('surveys', '0007_study_language'),
    ]

    operations = [
        migrations.RunPython(DROP, CREATE),
        migrations.CreateModel(
            name='Withdrawal',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('study_slug', models.SlugField(help_text='Kept if the study is deleted later.')),
                ('respondent_id', models.CharField(db_index=True, help_text="The hashed PROLIFIC_PID, as in the combined export's respondent_id (HMAC with EXPORT_ID_SALT).", max_length=16)),
                ('reason', models.CharField(choices=[('withdrawn', 'Participant withdrew'), ('test', 'Test participant removed')], default='withdrawn', max_length=20)),
                ('note', models.TextField(blank=True, help_text='E.g. how the request arrived (Prolific message of …).')),
                ('requested_by', models.CharField(help_text='The admin user or shell user who carried it out.', max_length=150)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('participant_status', models.CharField(help_text='Their status before removal.', max_length=20)),
                ('was_test', models.BooleanField(default=False)),
                ('responses_deleted', models.PositiveIntegerField(default=0)),
                ('assignments_deleted', models.PositiveIntegerField(default=0)),
            ],
            options={
                'ordering': ['-created_at'],
            },
        ),
        migrations.AddField(
            model_name='participant',
            name='declined_at',
            field=models.DateTimeField(blank=True, help_text='When they clicked “I do not agree”.', null=True),
        ),
        migrations.AddField(
            model_name='participant',
            name='is_test',
            field=models.BooleanField(db_index=True, default=False, help_text="Entered through a researcher's test link (surveys.test_mode): left out of reports, balancing and exports, and removable.", verbose_name='test'),
        ),
        migrations.AlterField(
            model_name='participant',
            name='status',
            field=models.CharField(choices=[('started', 'Started'), ('completed', 'Completed'), ('returned', 'Returned'), ('timed_out', 'Timed out'), ('screened_out', 'Screened out'), ('declined', 'Declined consent')], db_index=True, default='started', max_length=20),
        ),
        migrations.AddConstraint(
            model_name='participant',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('status', 'declined'), _negated=True), ('declined_at__isnull', False), _connector='OR'), name='participant_declined_has_time'),
        ),
        migrations.AddField(
            model_name='withdrawal',
            name='study',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='withdrawals', to='surveys.study'),
        ),
        migrations.RunPython(CREATE, DROP),
    ]
