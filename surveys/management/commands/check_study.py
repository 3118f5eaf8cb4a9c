"""python manage.py check_study FILE [--items N]"""
from django.core.management.base import BaseCommand, CommandError

from surveys.definition.errors import DefinitionError
from surveys.definition.preview import preview_file


class Command(BaseCommand):
    help = ("Check a study definition file without writing anything, and print what a participant page and a "
            "prompt look like for its first items.")

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--items", type=int, default=2, help="how many items to show (default 2)")
        parser.add_argument("--style", default="standard", help="the prompt style to show")

    def handle(self, *args, **options):
        try:
            text = preview_file(options["file"], count=options["items"], style=options["style"])
        except DefinitionError as exc:
            raise CommandError(f"{len(exc.problems)} problem(s)\n"
                               + "\n".join(f"  {p}" for p in exc.problems)) from None
        self.stdout.write(text)
        self.stdout.write(self.style.SUCCESS("OK: nothing was written"))
