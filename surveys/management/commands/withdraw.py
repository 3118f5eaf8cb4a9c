"""python manage.py withdraw <study> <PROLIFIC_PID> [--note TEXT] [--by NAME] --yes"""
import getpass

from django.core.management.base import BaseCommand, CommandError

from access.cli import add_as_argument, acting_user
from surveys.cli import get_study
from surveys.models import Participant
from surveys.withdrawal import WithdrawalError, preview, withdraw


class Command(BaseCommand):
    help = ("A participant's request to withdraw: delete their answers, slots and participant row from a study, "
            "keeping an audit record (hashed PID, who, when, how many answers). Without --yes, only says what "
            "would be deleted.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("study", help="slug of the study")
        parser.add_argument("pid", metavar="PROLIFIC_PID")
        parser.add_argument("--note", default="", help="for the audit record, e.g. how the request arrived")
        parser.add_argument("--by", default="", help="who carries it out (default: the shell user)")
        parser.add_argument("--yes", action="store_true", help="delete (otherwise a dry run)")

    def handle(self, *args, **options):
        study = get_study(options["study"], acting_user(options))
        pid = options["pid"].strip()
        participant = Participant.objects.filter(study=study, prolific_pid=pid).first()
        if participant is not None and not options["yes"]:
            would = preview(participant)
            self.stdout.write(f"would delete {pid} from {study.slug} (status {participant.status}"
                              f"{', test participant' if participant.is_test else ''}): {would.responses} answers, "
                              f"{would.assignments} slots and the participant row. Add --yes to do it.")
            return
        try:
            record = withdraw(study, pid, by=options["by"] or f"shell:{getpass.getuser()}", note=options["note"])
        except WithdrawalError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(self.style.SUCCESS(
            f"withdrew {pid} from {study.slug}: deleted {record.responses_deleted} answers and "
            f"{record.assignments_deleted} slots; audit record {record.pk} (respondent_id "
            f"{record.respondent_id}, the id earlier exports used)"))
