"""python manage.py show_links: where to go once the platform runs."""
from django.conf import settings
from django.core.management.base import BaseCommand

from access.cli import acting_user, add_as_argument, scoped
from surveys.models import Study
from surveys.test_mode import pilot_link


class Command(BaseCommand):
    help = ("Print the admin URL and, per study, a test-participant link (its answers are kept out of reports, "
            "balancing and exports), the preview and the Prolific link.")

    def add_arguments(self, parser):
        parser.add_argument("--base", default=settings.SITE_URL, help="site URL (default: SITE_URL)")
        add_as_argument(parser)

    def handle(self, *args, base: str, **options):
        base = base.rstrip("/")
        self.stdout.write(f"Admin:            {base}/admin/")
        self.stdout.write(f"REST API:         {base}/api-auth/login/?next=/api/ (log in as the admin user; "
                          "scripts send a token: admin › Auth Token › Tokens)")
        for study in scoped(Study.objects.order_by("slug"), acting_user(options)):
            self.stdout.write(f"\nStudy {study.slug!r} ({study.get_status_display()}): {study.title}")
            self.stdout.write(f"  try it as a participant: {pilot_link(base, study)}")
            self.stdout.write("    (a test participant: kept out of reports, balancing and exports; "
                              "remove with `.venv/bin/python manage.py remove_test_participants "
                              f"{study.slug} --yes`)")
            self.stdout.write(f"  researcher preview:      {base}/s/{study.slug}/preview/")
            self.stdout.write(f"  link for Prolific:       {study.participant_link(base)}")
