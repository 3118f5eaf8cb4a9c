"""The run's prompt-version field default is a neutral marker instead of one family's version (issue 34): a new
run left at it still gets its kind's version when it is created (ElicitationRun.save); stored values are untouched
(Django keeps the default in Python only: no database change)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('elicitation', '0017_model_response_question'),
    ]

    operations = [
        migrations.AlterField(
            model_name='elicitationrun',
            name='prompt_version',
            field=models.CharField(default='kind-default', max_length=50),
        ),
    ]
