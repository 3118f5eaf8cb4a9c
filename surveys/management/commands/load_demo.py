"""python manage.py load_demo — the two live demo studies (idempotent)."""
from django.conf import settings
from django.core.management.base import BaseCommand

from config import registry

from surveys.demo.loader import load_demo


class Command(BaseCommand):
    help = ("Create the demo studies the installed families contribute (" + ", ".join(registry.names("demos")) +
            ") with their items. Studies that already exist are left unchanged.")

    def add_arguments(self, parser):
        parser.add_argument("--no-links", action="store_true",
                            help="do not print the studies' links (make run prints them once the server is up)")

    def handle(self, *args, **options):
        outcomes = load_demo()
        for outcome in outcomes:
            style = self.style.SUCCESS if outcome.created else self.style.WARNING
            self.stdout.write(style(outcome.message))
        if not any(o.created for o in outcomes):
            self.stdout.write("nothing changed: the demo studies were already loaded")
        if options["no_links"]:
            return
        for outcome in outcomes:
            study = outcome.study
            self.stdout.write(f"{study.slug}:\n  Prolific link: {study.participant_link()}\n"
                              f"  preview:       {settings.SITE_URL}/s/{study.slug}/preview/")
