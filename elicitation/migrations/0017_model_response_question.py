"""Several questions per item ([[questions]], issue 31 point 5): a model answer is to one question of its item
(``ModelResponse.question``: the question's key; "" for a study's one question), unique per
(run, item, sample index, question). Attention checks asked of an agent (``[[agents]] checks = true``, issue 31
point 3): a row with no item and the check's key (``check_key``), unique per (run, check, sample index); a row is
either an item's answer or a check's.

SQLite rebuilds the table for the new column and constraint, which drops its trigger: it is created again here,
and "an answered model response cannot be changed" now covers ``question`` and ``check_key`` too (on PostgreSQL the function is
replaced). The rule is that of migrations 0003, 0004 and 0013; reversing restores 0013's trigger.
"""
import django.db.models.deletion
from django.db import migrations, models

ANSWERED = "an answered model response cannot be changed"
BEFORE = ("status", "value", "choice", "lower", "upper", "text", "raw_output", "distribution", "run_id", "item_id",
          "sample_index")
ANSWER = (*BEFORE, "question", "check_key")


def sqlite(columns: tuple[str, ...]) -> list[str]:
    return [
        "DROP TRIGGER IF EXISTS hedgelab_model_response_answered",
        f"""CREATE TRIGGER hedgelab_model_response_answered BEFORE UPDATE ON elicitation_modelresponse
    WHEN OLD.status IN ('ok', 'unparseable') AND ({" OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in columns)})
    BEGIN
        SELECT RAISE(ABORT, '{ANSWERED}');
    END""",
    ]


def postgresql(columns: tuple[str, ...]) -> list[str]:
    return [
        f"""CREATE OR REPLACE FUNCTION hedgelab_model_response_answered() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF OLD.status IN ('ok', 'unparseable') AND
           ({", ".join(f"NEW.{c}" for c in columns)}) IS DISTINCT FROM ({", ".join(f"OLD.{c}" for c in columns)}) THEN
            RAISE EXCEPTION '{ANSWERED} (model response %)', OLD.id USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$""",
    ]


def _run(columns: tuple[str, ...]):
    def run(apps, schema_editor):
        statements = {"sqlite": sqlite, "postgresql": postgresql}.get(schema_editor.connection.vendor)
        for sql in statements(columns) if statements else []:
            schema_editor.execute(sql, params=None)  # no placeholders: "%" is literal
    return run


class Migration(migrations.Migration):

    dependencies = [
        ('elicitation', '0016_api_style_choices_registry'),
    ]

    operations = [
        # reversed last: 0013's trigger again, once the table is back as it was
        migrations.RunPython(migrations.RunPython.noop, _run(BEFORE)),
        migrations.AddField(
            model_name='modelresponse',
            name='question',
            field=models.CharField(blank=True, default='', help_text="The key of the item's question this answer is to ([[questions]]; empty: the study's one question).", max_length=40),
        ),
        migrations.RemoveConstraint(
            model_name='modelresponse',
            name='model_response_unique_sample',
        ),
        migrations.AddConstraint(
            model_name='modelresponse',
            constraint=models.UniqueConstraint(fields=('run', 'item', 'sample_index', 'question'), name='model_response_unique_sample'),
        ),
        migrations.AddField(
            model_name='modelresponse',
            name='check_key',
            field=models.CharField(blank=True, default='', help_text='An attention check\'s key ([[checks]]) for the answer of an agent that asks them (``checks = true``); empty for an item\'s answer.', max_length=40),
        ),
        migrations.AlterField(
            model_name='modelresponse',
            name='item',
            field=models.ForeignKey(blank=True, help_text='The item asked (empty for an attention check\'s answer: see check_key).', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='model_responses', to='surveys.item'),
        ),
        migrations.AddConstraint(
            model_name='modelresponse',
            constraint=models.UniqueConstraint(condition=models.Q(('check_key', ''), _negated=True), fields=('run', 'check_key', 'sample_index'), name='model_response_unique_check'),
        ),
        migrations.AddConstraint(
            model_name='modelresponse',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('check_key', ''), ('item__isnull', False)), models.Q(('item__isnull', True), ('question', ''), models.Q(('check_key', ''), _negated=True)), _connector='OR'), name='model_response_item_or_check'),
        ),
        migrations.AlterModelOptions(
            name='modelresponse',
            options={'ordering': ['run', 'item', 'sample_index', 'question']},
        ),
        migrations.RunPython(_run(ANSWER), _run(BEFORE)),  # reversed first: no trigger may name question when it goes
    ]
