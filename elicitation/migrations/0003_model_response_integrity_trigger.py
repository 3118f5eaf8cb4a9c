"""A database trigger that keeps model answers whole (SQLite and PostgreSQL): once a (run, item, sample)
row holds an answer (status "ok" or "unparseable"), its answer — status, value, raw output, distribution,
and which run, item and sample it is — can never be changed. Workers fill in only pending rows, so a late
or redelivered answer is discarded; this makes that a rule of the database, not only of the code.

Uniqueness per (run, item, sample index) is in the model's constraints.
"""
from django.db import migrations

ANSWERED = "an answered model response cannot be changed"

SQLITE = [
    f"""CREATE TRIGGER hedgelab_model_response_answered BEFORE UPDATE ON elicitation_modelresponse
    WHEN OLD.status IN ('ok', 'unparseable') AND (
         NEW.status IS NOT OLD.status OR NEW.value IS NOT OLD.value OR NEW.raw_output IS NOT OLD.raw_output
         OR NEW.distribution IS NOT OLD.distribution OR NEW.run_id IS NOT OLD.run_id
         OR NEW.item_id IS NOT OLD.item_id OR NEW.sample_index IS NOT OLD.sample_index)
    BEGIN
        SELECT RAISE(ABORT, '{ANSWERED}');
    END""",
]
SQLITE_REVERSE = ["DROP TRIGGER IF EXISTS hedgelab_model_response_answered"]

POSTGRESQL = [
    f"""CREATE FUNCTION hedgelab_model_response_answered() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF OLD.status IN ('ok', 'unparseable') AND
           (NEW.status, NEW.value, NEW.raw_output, NEW.distribution, NEW.run_id, NEW.item_id, NEW.sample_index)
           IS DISTINCT FROM
           (OLD.status, OLD.value, OLD.raw_output, OLD.distribution, OLD.run_id, OLD.item_id, OLD.sample_index) THEN
            RAISE EXCEPTION '{ANSWERED} (model response %)', OLD.id USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$""",
    """CREATE TRIGGER hedgelab_model_response_answered BEFORE UPDATE ON elicitation_modelresponse
    FOR EACH ROW EXECUTE FUNCTION hedgelab_model_response_answered()""",
]
POSTGRESQL_REVERSE = ["DROP TRIGGER IF EXISTS hedgelab_model_response_answered ON elicitation_modelresponse",
                      "DROP FUNCTION IF EXISTS hedgelab_model_response_answered()"]


def _run(statements: dict[str, list[str]]):
    def run(apps, schema_editor):
        for sql in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(sql, params=None)  # no placeholders: "%" is literal
    return run


class Migration(migrations.Migration):

    dependencies = [
        ('elicitation', '0002_leases_slots_buckets_provenance'),
    ]

    operations = [
        migrations.RunPython(_run({"sqlite": SQLITE, "postgresql": POSTGRESQL}),
                             _run({"sqlite": SQLITE_REVERSE, "postgresql": POSTGRESQL_REVERSE})),
    ]
