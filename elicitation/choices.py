"""The choices of the endpoint's API style and the run's mode (``ModelEndpoint.ApiStyle``, ``ElicitationRun.Mode``).

They sit below the models so that code the models call (elicitation/run_settings.py) can name them without
importing the models.
"""
from __future__ import annotations

from django.db import models


class ApiStyle(models.TextChoices):
    CHAT = "chat", "chat completions"
    COMPLETIONS = "completions", "text completions"


class Mode(models.TextChoices):
    GREEDY = "greedy", "greedy (temperature 0, one answer)"
    SAMPLED = "sampled", "sampled (n answers at temperature T)"
    TOP_LOGPROBS = "top_logprobs", "top-logprobs distribution"
    FULL_DISTRIBUTION = "full_distribution", "full distribution (completion logprobs)"
    LIKELIHOOD = "likelihood", "likelihood of each option (prompt logprobs; elicitation/likelihood.py)"
