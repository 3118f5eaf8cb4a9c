"""python manage.py definition_schema [--out FILE]"""
import json
from pathlib import Path

from django.core.management.base import BaseCommand

from surveys.definition.schema import json_schema

PUBLISHED = Path(__file__).resolve().parents[3] / "docs" / "reference" / "study-definition.schema.json"


class Command(BaseCommand):
    help = "Print (or write) the JSON Schema of study definition files, for editors that complete keys."

    def add_arguments(self, parser):
        parser.add_argument("--out", help=f"write it here (the docs' copy: {PUBLISHED.relative_to(PUBLISHED.parents[2])})")

    def handle(self, *args, **options):
        text = json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
        if options["out"]:
            Path(options["out"]).write_text(text, encoding="utf-8")
            self.stdout.write(f"wrote {options['out']}")
        else:
            self.stdout.write(text, ending="")
