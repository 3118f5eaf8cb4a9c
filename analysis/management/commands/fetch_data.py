"""python manage.py fetch_data NAME …: download public reference data with a pinned checksum into the cache."""
from __future__ import annotations

import os
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from analysis.reference_data import FetchError, datasets, fetch


def shown(path: Path) -> str:
    """The path relative to the working directory when it lies below it (as the next command would type it)."""
    try:
        return os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd().resolve()) else str(path)
    except ValueError:
        return str(path)


class Command(BaseCommand):
    help = ("Download public reference data (the Fagen-Ulmschneider survey, the families' published stimuli) from "
            "its source, check it against a pinned SHA-256 and cache it (REFERENCE_DATA_DIR, default var/data); "
            "print the source, a licence note and the citation. A file whose checksum differs is refused.")

    def add_arguments(self, parser):
        parser.add_argument("names", nargs="*", metavar="NAME",
                            help=f"dataset(s) to fetch: {', '.join(sorted(datasets()))}")
        parser.add_argument("--list", action="store_true", dest="list_only", help="list the datasets, fetch nothing")

    def handle(self, *args, names: list[str], list_only: bool, **options):
        known = ", ".join(sorted(datasets()))
        if list_only:
            for dataset in datasets().values():
                self.stdout.write(f"{dataset.name}: {dataset.title}\n  source:  {dataset.source}")
            return
        if not names:
            raise CommandError(f"name a dataset to fetch: {known}")
        unknown = [name for name in names if name not in datasets()]
        if unknown:
            raise CommandError(f"no dataset {', '.join(map(repr, unknown))}; known: {known}")
        for name in dict.fromkeys(names):
            dataset = datasets()[name]
            try:
                paths = fetch(dataset)
            except FetchError as exc:
                raise CommandError(f"{name}: {exc}")
            self.stdout.write(self.style.SUCCESS(f"{name}: {dataset.title}"))
            self.stdout.write(f"  source:   {dataset.source}")
            self.stdout.write(f"  licence:  {dataset.licence}")
            self.stdout.write(f"  cite:     {dataset.citation}")
            for path, file in zip(paths, dataset.files):
                self.stdout.write(f"  file:     {shown(path)} (SHA-256 {file.sha256[:12]}…, checked)")
            self.stdout.write(f"  next:     {dataset.next_step.format(path=shown(paths[0]))}")
