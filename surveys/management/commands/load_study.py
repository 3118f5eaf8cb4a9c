"""python manage.py load_study FILE [--slug S] [--new-version]"""
from django.core.management.base import BaseCommand, CommandError

from access.cli import acting_user, add_as_argument
from surveys.definition.errors import DefinitionError
from surveys.definition.loader import load_file


class Command(BaseCommand):
    help = ("Create or update a study from its definition file (TOML) and the item files it names. All or "
            "nothing: every problem is listed with the file and the key path or line and column.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("file", help="the definition file, e.g. studies/examples/hedge-confidence/study.toml")
        parser.add_argument("--slug", help="load it under this slug instead of [study] slug")
        parser.add_argument("--new-version", action="store_true",
                            help="allow a change of wording or items of a study that already has answers "
                                 "(a new version; earlier answers keep theirs)")

    def handle(self, *args, **options):
        user = acting_user(options)
        try:
            loaded = load_file(options["file"], slug=options["slug"], new_version=options["new_version"], owner=user)
        except DefinitionError as exc:
            raise CommandError(f"nothing loaded: {len(exc.problems)} problem(s)\n"
                               + "\n".join(f"  {p}" for p in exc.problems)) from None
        self.stdout.write(self.style.SUCCESS(loaded.summary()))
