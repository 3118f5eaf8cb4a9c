"""python manage.py attention <study>: the exclusion rules' step (``manage.py exclusions``) under its old name."""
from .exclusions import Command as Exclusions


class Command(Exclusions):
    help = ("Apply the study's exclusion rules (the same as `manage.py exclusions`; the attention filter "
            "of the study's kind is one of them) and store each completed participant's decision. Nobody is "
            "deleted.")
