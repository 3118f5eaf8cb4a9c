"""python manage.py create_study <slug> --instrument <kind> [--title …] [--participant-title …]
[--language en|zh] [--reference <slug>] [--items-per-participant N|all]
[--live]"""
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from access.cli import add_as_argument, acting_user
from surveys.cli import get_study
from surveys.instruments import get_instrument, instrument_choices
from surveys.models import Study


def items_per_participant(text: str) -> int | None:
    """A count of items, or "all" (None: every item of the study)."""
    if text.strip().lower() == "all":
        return None
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{text!r} is neither a number nor 'all'") from None
    if value < 1:
        raise ValueError("at least 1 (or 'all')")
    return value


items_per_participant.__name__ = "items per participant"  # argparse names the type in its error


class Command(BaseCommand):
    help = ("Create a study (a draft unless --live) so that a reproduction can be scripted: then import or "
            "generate its items (import_items, generate_items) and start runs.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("slug", help="appears in the participant link /s/<slug>/ (letters, digits, hyphens)")
        parser.add_argument("--instrument", required=True, choices=[name for name, _ in instrument_choices()])
        parser.add_argument("--title", help="for researchers (lists, reports, exports); default: the slug")
        parser.add_argument("--participant-title", default="",
                            help="the title participants see in each page's header and browser tab "
                                 "(default: the title)")
        parser.add_argument("--language", default="en", choices=["en", "zh"],
                            help="language of the participant pages (zh: Simplified Chinese)")
        parser.add_argument("--reference", help="slug of the non-verifiable companion study (verifiable sets)")
        parser.add_argument("--items-per-participant", type=items_per_participant, default=False,
                            help="kinds without expressions (WEP choice, intervals, verbalisations): items each "
                                 "participant answers, or 'all' (default: the kind's own, printed: wep_choice "
                                 "30, interval_confidence 10, verbalisation_choice 12)")
        parser.add_argument("--live", action="store_true", help="open it to participants at once")

    def handle(self, *args, **options):
        slug = options["slug"]
        if Study.objects.filter(slug=slug).exists():
            raise CommandError(f"a study with slug {slug!r} exists already")
        study = Study(slug=slug, title=options["title"] or slug,
                      participant_title=options["participant_title"], instrument=options["instrument"],
                      status=Study.Status.LIVE if options["live"] else Study.Status.DRAFT)
        study.language = "zh-hans" if options["language"] == "zh" else "en"
        kind = get_instrument(study.instrument)
        given = options["items_per_participant"]
        study.items_per_participant = kind.default_items_per_participant if given is False else given
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
        self.stdout.write(per_participant_note(kind, study.items_per_participant, given is not False))


def per_participant_note(kind, count: int | None, given: bool) -> str:
    """The line saying how many items a participant answers, and where that number comes from."""
    if kind.default_items_per_participant is None:
        return (f"items per participant: drawn per expression ({kind.name} items have expressions; "
                "set items per expression and controls in the admin)")
    shown = "all of the study's items" if count is None else str(count)
    if given:
        return f"items per participant: {shown}"
    return (f"items per participant: {shown} (the {kind.name} default: {kind.items_per_participant_reason}; "
            "change it with --items-per-participant N or 'all', or in the admin)")
