"""Database triggers that keep human answers whole, whatever code writes them (SQLite and PostgreSQL).

A response can be inserted only
- for its own assignment's participant and item (no answer attached to another participant's slot), and
- while that participant is still answering (status "started"): a completed, returned, timed-out or
  screened-out participant cannot be answered again.
A saved response's answer (value, raw text, slot, participant, item) can never be changed.

Uniqueness (one response per slot, one per participant and item) is in the model's constraints.
"""
from django.db import migrations

NOT_ITS_SLOT = "a response must belong to its own assignment''s participant and item"
NOT_ANSWERING = ("the participant is not answering (completed, returned, timed out or screened out): "
                 "no new response can be saved")
IMMUTABLE = "a saved response cannot be changed"

SQLITE = [
    f"""CREATE TRIGGER hedgelab_response_insert BEFORE INSERT ON surveys_response
    BEGIN
        SELECT RAISE(ABORT, '{NOT_ITS_SLOT}')
        WHERE NOT EXISTS (SELECT 1 FROM surveys_assignment a WHERE a.id = NEW.assignment_id
                          AND a.participant_id = NEW.participant_id AND a.item_id = NEW.item_id);
        SELECT RAISE(ABORT, '{NOT_ANSWERING}')
        WHERE NOT EXISTS (SELECT 1 FROM surveys_participant p WHERE p.id = NEW.participant_id
                          AND p.status = 'started');
    END""",
    f"""CREATE TRIGGER hedgelab_response_update BEFORE UPDATE ON surveys_response
    WHEN NEW.value IS NOT OLD.value OR NEW.raw IS NOT OLD.raw OR NEW.assignment_id IS NOT OLD.assignment_id
         OR NEW.participant_id IS NOT OLD.participant_id OR NEW.item_id IS NOT OLD.item_id
    BEGIN
        SELECT RAISE(ABORT, '{IMMUTABLE}');
    END""",
]
SQLITE_REVERSE = ["DROP TRIGGER IF EXISTS hedgelab_response_insert", "DROP TRIGGER IF EXISTS hedgelab_response_update"]

POSTGRESQL = [
    f"""CREATE FUNCTION hedgelab_response_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' THEN
            IF (NEW.value, NEW.raw, NEW.assignment_id, NEW.participant_id, NEW.item_id)
               IS DISTINCT FROM (OLD.value, OLD.raw, OLD.assignment_id, OLD.participant_id, OLD.item_id) THEN
                RAISE EXCEPTION '{IMMUTABLE} (response %)', OLD.id USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END IF;
        IF NOT EXISTS (SELECT 1 FROM surveys_assignment a WHERE a.id = NEW.assignment_id
                       AND a.participant_id = NEW.participant_id AND a.item_id = NEW.item_id) THEN
            RAISE EXCEPTION '{NOT_ITS_SLOT}' USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        -- FOR SHARE: the participant's status cannot change until this transaction ends
        PERFORM 1 FROM surveys_participant p WHERE p.id = NEW.participant_id AND p.status = 'started' FOR SHARE;
        IF NOT FOUND THEN
            RAISE EXCEPTION '{NOT_ANSWERING}' USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$""",
    """CREATE TRIGGER hedgelab_response_guard BEFORE INSERT OR UPDATE ON surveys_response
    FOR EACH ROW EXECUTE FUNCTION hedgelab_response_guard()""",
]
POSTGRESQL_REVERSE = ["DROP TRIGGER IF EXISTS hedgelab_response_guard ON surveys_response",
                      "DROP FUNCTION IF EXISTS hedgelab_response_guard()"]


def _run(statements: dict[str, list[str]]):
    def run(apps, schema_editor):
        for sql in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(sql, params=None)  # no placeholders: "%" is literal
    return run


class Migration(migrations.Migration):

    dependencies = [
        ('surveys', '0002_participant_live_attention_rho'),
    ]

    operations = [
        migrations.RunPython(_run({"sqlite": SQLITE, "postgresql": POSTGRESQL}),
                             _run({"sqlite": SQLITE_REVERSE, "postgresql": POSTGRESQL_REVERSE})),
    ]
