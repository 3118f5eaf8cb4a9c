"""python manage.py generate_items <study> --design <name> [design options]"""
from django.core.management.base import BaseCommand, CommandError

from access.cli import add_as_argument, acting_user
from surveys.cli import get_study
from surveys.designs import DesignError, designs, generate_items


def design_help() -> str:
    """Each installed design and what it makes (the command's help)."""
    return "; ".join(f"{d.name}: {d.summary}" for d in designs().values())


class Command(BaseCommand):
    help = ("Generate a study's items from a published design, all or nothing. Designs — " + design_help() +
            ". Each design takes only its own options (an option it does not take is refused).")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("study", help="slug of an existing study (its instrument must be the design's)")
        parser.add_argument("--design", required=True, choices=sorted(designs()))
        parser.add_argument("--seed", type=int, help="random seed (tang-rq2: the NUMBERS draw; wep-reasoning)")
        parser.add_argument("--numbers", help="tang-rq2: 'paper' for the authors' two NUMBERS sets (the narrow set "
                                              "of the Methods and the wide set they used), or a file with the two "
                                              "sets (narrow, then wide), 20 numbers each, one set per line")
        # Django's own --settings (the settings module) is read by manage.py itself, so the context settings
        # are --contexts.
        parser.add_argument("--contexts", help="tang-rq1: context settings, comma-separated (CNC,ENC,FCNC,MCNC; "
                                               "default all four)")
        parser.add_argument("--hints", help="bahaj-hints: hint conditions, comma-separated (hint1,hint3,hint8; "
                                            "default all three)")
        parser.add_argument("--language", choices=["en", "zh"], help="tang-rq1: language of the contexts")
        parser.add_argument("--hops", type=int, choices=[1, 2], help="wep-reasoning: reasoning steps")
        parser.add_argument("--n", type=int, help="wep-reasoning: how many items")
        parser.add_argument("--start", type=int, help="wep-reasoning: skip the first items of the series")

    def handle(self, *args, **options):
        study = get_study(options["study"], acting_user(options))
        chosen = {k: options[k] for k in ("seed", "language", "hops", "n", "start", "numbers")}
        if options["hints"]:
            chosen["hints"] = [h.strip().lower() for h in options["hints"].split(",") if h.strip()]
        if options["contexts"]:
            chosen["settings"] = [s.strip().upper() for s in options["contexts"].split(",") if s.strip()]
        try:
            # Paths are for the command line only: the design's command_line hook reads a file named here
            # (e.g. --numbers FILE) and generate_items gets its values.
            chosen = designs()[options["design"]].command_line(chosen)
        except (DesignError, OSError, UnicodeDecodeError) as exc:
            raise CommandError(str(exc)) from None
        try:
            items = generate_items(study, options["design"], **chosen)
        except DesignError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(self.style.SUCCESS(f"generated {len(items)} {options['design']} items in {study.slug}"))
        for note in designs()[options["design"]].notes(items):
            self.stdout.write(f"  note: {note}")
