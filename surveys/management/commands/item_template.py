"""python manage.py item_template KIND [--output FILE]"""
from django.core.management.base import BaseCommand, CommandError

from surveys.instruments import instrument_choices
from surveys.item_template import item_template


class Command(BaseCommand):
    help = ("Print a template CSV of items for a kind: its required columns first, in their fixed order, then "
            "the optional ones, with two example rows (it imports as it is: import_items STUDY FILE).")

    def add_arguments(self, parser):
        parser.add_argument("kind", choices=[name for name, _ in instrument_choices()], help="the study's kind")
        parser.add_argument("--output", "-o", help="write to this file instead of the standard output")

    def handle(self, *args, **options):
        text = item_template(options["kind"])
        if not options["output"]:
            self.stdout.write(text, ending="")
            return
        try:
            with open(options["output"], "x", encoding="utf-8", newline="") as handle:
                handle.write(text)
        except FileExistsError:
            raise CommandError(f"{options['output']} exists; give another file name") from None
        self.stdout.write(self.style.SUCCESS(f"wrote the {options['kind']} template to {options['output']}"))
