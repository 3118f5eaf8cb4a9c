"""python manage.py load_study FILE [--slug S] [--new-version] [--live]"""
from django.core.management.base import BaseCommand, CommandError

from access.cli import acting_user, add_as_argument
from surveys.definition.errors import DefinitionError
from surveys.definition.loader import load_file
from surveys.models import Study


class Command(BaseCommand):
    help = ("Create or update a study from its definition file (TOML) and the item files it names. All or "
            "nothing: every problem is listed with the file and the key path or line and column. A new study is "
            "a draft (participants cannot enter; its test link and preview work) until --live or the admin "
            "opens it; loading never changes the status otherwise.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("file", help="the definition file (e.g. studies/examples/hedge-confidence/study.toml), "
                                         "or a shipped study by name (e.g. examples/word-choice)")
        parser.add_argument("--slug", help="load it under this slug instead of [study] slug")
        parser.add_argument("--new-version", action="store_true",
                            help="allow a change of wording or items of a study that already has answers "
                                 "(a new version; earlier answers keep theirs)")
        parser.add_argument("--live", action="store_true",
                            help="open the study to participants once loaded (status Live)")

    def handle(self, *args, **options):
        user = acting_user(options)
        try:
            loaded = load_file(options["file"], slug=options["slug"], new_version=options["new_version"], owner=user)
        except DefinitionError as exc:
            raise CommandError(f"nothing loaded: {len(exc.problems)} problem(s)\n"
                               + "\n".join(f"  {p}" for p in exc.problems)) from None
        self.stdout.write(self.style.SUCCESS(loaded.summary()))
        study = loaded.study
        if options["live"] and study.status != Study.Status.LIVE:
            study.status = Study.Status.LIVE
            study.save(update_fields=["status"])
        self.stdout.write(status_line(study, options["file"]))


def status_line(study: Study, file: str) -> str:
    """What the study's status means for who can enter, and how to change it."""
    if study.status == Study.Status.LIVE:
        return ("status: live: participants can enter with its link (`.venv/bin/python manage.py show_links` "
                "prints it)")
    how = (f"open it with `.venv/bin/python manage.py load_study {file} --live` or in the admin (Studies › "
           f"{study.slug} › Status: Live)")
    if study.status == Study.Status.CLOSED:
        return f"status: closed: nobody new can enter; {how}"
    return (f"status: draft: participants cannot enter yet; try it yourself with its test link "
            f"(`.venv/bin/python manage.py show_links`), then {how}")
