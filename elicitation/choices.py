"""The choices of the endpoint's API style and the run's mode (``ModelEndpoint.ApiStyle``, ``ElicitationRun.Mode``).

They sit below the models so that code the models call (elicitation/run_settings.py) can name them without
importing the models. The API styles are those registered in elicitation/api_styles/: ``api_style_choices`` is
what the model fields offer (a callable, so that a new style needs no migration), ``ApiStyle`` names the built-in
ones (``ApiStyle.CHAT``, ``ApiStyle.COMPLETIONS``).
"""
from __future__ import annotations

from django.db import models

from .api_styles import styles


def api_style_choices() -> list[tuple[str, str]]:
    """(name, label) of every registered API style."""
    return [(style.name, style.label) for style in styles()]


ApiStyle = models.TextChoices("ApiStyle", [(name.upper(), (name, label)) for name, label in api_style_choices()])


class Mode(models.TextChoices):
    GREEDY = "greedy", "greedy (temperature 0, one answer)"
    SAMPLED = "sampled", "sampled (n answers at temperature T)"
    TOP_LOGPROBS = "top_logprobs", "top-logprobs distribution"
    FULL_DISTRIBUTION = "full_distribution", "full distribution (completion logprobs)"
    LIKELIHOOD = "likelihood", "likelihood of each option (prompt logprobs; elicitation/likelihood.py)"
