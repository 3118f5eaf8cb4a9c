"""The participant's between-subjects cell (``condition``) and block order (``block_order``), issue 31.

On SQLite adding the columns may rebuild the participant table, which fails while the response triggers name it
("error in trigger … no such table"): the triggers are dropped first and created again at the end as 0016 made
them (every answer column, ``text`` included). PostgreSQL alters in place.
"""
from importlib import import_module

from django.db import migrations, models

first = import_module("surveys.migrations.0003_response_integrity_triggers")
current = import_module("surveys.migrations.0016_free_text_option_order")
DROP = first._run({"sqlite": first.SQLITE_REVERSE})


def CREATE(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        current._run(current.ANSWER)(apps, schema_editor)


class Migration(migrations.Migration):

    dependencies = [
        ('surveys', '0020_checks_and_exclusion_decisions'),
    ]

    operations = [
        migrations.RunPython(DROP, CREATE),
        migrations.AddField(
            model_name='participant',
            name='block_order',
            field=models.JSONField(blank=True, default=list, help_text='The blocks in the order this participant saw them (empty: no blocks).'),
        ),
        migrations.AddField(
            model_name='participant',
            name='condition',
            field=models.CharField(blank=True, db_index=True, default='', help_text="The between-subjects cell this participant was given (levels' keys joined by -); empty: the study declares no factors.", max_length=200),
        ),
        migrations.RunPython(CREATE, DROP),
    ]
