"""python manage.py create_study <slug> --instrument <kind> [--title …] [--language en|zh] [--reference <slug>] [--live]"""
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from access.cli import add_as_argument, acting_user
from surveys.cli import get_study
from surveys.instruments import instrument_choices
from surveys.models import Study


class Command(BaseCommand):
    help = ("Create a study (a draft unless --live) so that a reproduction can be scripted: then import or "
            "generate its items (import_items, generate_items) and start runs.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("slug", help="appears in the participant link /s/<slug>/ (letters, digits, hyphens)")
        parser.add_argument("--instrument", required=True, choices=[name for name, _ in instrument_choices()])
        parser.add_argument("--title", help="default: the slug")
        parser.add_argument("--language", default="en", choices=["en", "zh"],
                            help="language of the participant pages (zh: Simplified Chinese)")
        parser.add_argument("--reference", help="slug of the non-verifiable companion study (verifiable sets)")
        parser.add_argument("--items-per-participant", type=int,
                            help="kinds without expressions (WEP choice, intervals, verbalisations): items each "
                                 "participant answers (default: all)")
        parser.add_argument("--live", action="store_true", help="open it to participants at once")

    def handle(self, *args, **options):
        slug = options["slug"]
        if Study.objects.filter(slug=slug).exists():
            raise CommandError(f"a study with slug {slug!r} exists already")
        study = Study(slug=slug, title=options["title"] or slug, instrument=options["instrument"],
                      status=Study.Status.LIVE if options["live"] else Study.Status.DRAFT)
        study.language = "zh-hans" if options["language"] == "zh" else "en"
        study.items_per_participant = options["items_per_participant"]
        study.owner = acting_user(options)  # --as: theirs; otherwise superusers' until one gives it an owner
        if options["reference"]:
            study.reference_study = get_study(options["reference"], acting_user(options))
        try:
            study.full_clean()
        except ValidationError as exc:
            raise CommandError("; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items()))
        study.save()
        self.stdout.write(self.style.SUCCESS(
            f"created study {study.slug} ({study.instrument}, {study.get_status_display().lower()}); "
            f"participant link: {study.participant_link()}"))
