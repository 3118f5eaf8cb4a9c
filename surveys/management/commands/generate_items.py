"""python manage.py generate_items <study> --design <name> [design options]"""
from django.core.management.base import BaseCommand, CommandError

from access.cli import add_as_argument, acting_user
from surveys.cli import get_study
from surveys.designs import DesignError, designs, generate_items
from surveys.designs.design import CliOption


def design_help() -> str:
    """Each installed design and what it makes (the command's help)."""
    return "; ".join(f"{d.name}: {d.summary}" for d in designs().values())


def design_options() -> dict[str, tuple[CliOption, list[str]]]:
    """Each flag the installed designs declare (``Design.cli``): its first declaration and the help of every
    design that takes it (``design: help``), in the families' order."""
    out: dict[str, tuple[CliOption, list[str]]] = {}
    for design in designs().values():
        for option in design.cli:
            out.setdefault(option.flag, (option, []))[1].append(f"{design.name}: {option.help}")
    return out


class Command(BaseCommand):
    help = ("Generate a study's items from a published design, all or nothing. Designs — " + design_help() +
            ". Each design takes only its own options (an option it does not take is refused).")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("study", help="slug of an existing study (its instrument must be the design's)")
        parser.add_argument("--design", required=True, choices=sorted(designs()))
        for flag, (option, helps) in design_options().items():
            parser.add_argument(flag, dest=option.dest, type=option.type, help="; ".join(helps),
                                **({"choices": list(option.choices)} if option.choices else {}))

    def handle(self, *args, **options):
        study = get_study(options["study"], acting_user(options))
        chosen = {}
        for option, _ in design_options().values():
            given = options.get(option.dest)
            if option.case and not given:
                continue  # an empty list option is not given
            chosen[option.key or option.dest] = option.value(given)
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
