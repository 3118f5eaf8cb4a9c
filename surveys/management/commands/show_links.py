"""python manage.py show_links: where to go once the platform runs."""
import secrets

from django.conf import settings
from django.core.management.base import BaseCommand

from surveys.models import Study


def test_link(base: str, study: Study) -> str:
    """A participant link with fresh ids of Prolific's form (24 and 12 hex characters), accepted by the entry page."""
    return (f"{base}/s/{study.slug}/?PROLIFIC_PID={secrets.token_hex(12)}"
            f"&STUDY_ID={secrets.token_hex(12)}&SESSION_ID={secrets.token_hex(6)}")


class Command(BaseCommand):
    help = "Print the admin URL and, per study, a participant test link, the preview and the Prolific link."

    def add_arguments(self, parser):
        parser.add_argument("--base", default=settings.SITE_URL, help="site URL (default: SITE_URL)")

    def handle(self, *args, base: str, **options):
        base = base.rstrip("/")
        self.stdout.write(f"Admin:            {base}/admin/")
        self.stdout.write(f"REST API:         {base}/api/")
        for study in Study.objects.order_by("slug"):
            self.stdout.write(f"\nStudy {study.slug!r} ({study.get_status_display()}): {study.title}")
            self.stdout.write(f"  try it as a participant: {test_link(base, study)}")
            self.stdout.write(f"  researcher preview:      {base}/s/{study.slug}/preview/")
            self.stdout.write(f"  link for Prolific:       {study.participant_link(base)}")
