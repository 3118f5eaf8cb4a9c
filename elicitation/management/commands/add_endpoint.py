"""python manage.py add_endpoint <name> --base-url URL --model ID [options]"""
from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from access.cli import add_as_argument, acting_user
from access.ownership import may
from elicitation import preflight
from elicitation.api_styles import styles
from elicitation.models import ModelEndpoint


def _decimal(value: str) -> Decimal:
    try:
        number = Decimal(value)
    except InvalidOperation:
        raise CommandError(f"{value!r} is not a price (use e.g. 0.0025)") from None
    if number < 0:
        raise CommandError(f"a price cannot be negative: {value}")
    return number


class Command(BaseCommand):
    help = ("Register (or with --update change) an OpenAI-compatible model endpoint. The API key is "
            "never stored: give the NAME of the environment variable that holds it (--key-env).")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("name", help="short name (letters, digits, - and _), used with elicit --endpoint")
        parser.add_argument("--base-url", help="e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1")
        parser.add_argument("--model", help="model id sent with each request, e.g. gpt-4o-2024-08-06")
        parser.add_argument("--api-style", choices=[style.name for style in styles()],
                            help="chat (messages) or completions (plain prompt text); default chat")
        parser.add_argument("--key-env", help="name of the environment variable holding the API key")
        parser.add_argument("--max-concurrency", type=int, help="requests in flight at once over all workers")
        parser.add_argument("--rpm", type=int, help="requests per minute (empty: no limit)")
        parser.add_argument("--tpm", type=int, help="tokens per minute (empty: no limit)")
        parser.add_argument("--price-prompt", help="USD per 1,000 prompt tokens")
        parser.add_argument("--price-completion", help="USD per 1,000 completion tokens")
        parser.add_argument("--timeout", type=float, help="seconds to wait for one answer")
        parser.add_argument("--max-retries", type=int, help="retries after a 429, 5xx, timeout")
        parser.add_argument("--no-seed", action="store_true", help="the endpoint does not take a seed")
        parser.add_argument("--update", action="store_true", help="change an existing endpoint")
        parser.add_argument("--no-check", action="store_true",
                            help="save without the pre-flight check (one cheap request to the endpoint)")

    def handle(self, *args, **o):
        user = acting_user(o)
        existing = ModelEndpoint.objects.filter(name=o["name"]).first()
        if existing and user is not None and not may(user, existing):
            raise CommandError(f"endpoint {o['name']!r} belongs to another researcher (--as {user})")
        if existing and not o["update"]:
            raise CommandError(f"endpoint {o['name']!r} exists; add --update to change it")
        if not existing and o["update"]:
            raise CommandError(f"no endpoint called {o['name']!r} to update")
        endpoint = existing or ModelEndpoint(name=o["name"], owner=user)
        if not existing and not (o["base_url"] and o["model"]):
            raise CommandError("a new endpoint needs --base-url and --model")
        simple = {"base_url": "base_url", "model": "model", "api_style": "api_style", "key_env": "api_key_env",
                  "max_concurrency": "max_concurrency", "rpm": "requests_per_minute",
                  "tpm": "tokens_per_minute", "timeout": "timeout_seconds", "max_retries": "max_retries"}
        for option, field in simple.items():
            if o[option] is not None:
                setattr(endpoint, field, o[option])
        if o["price_prompt"] is not None:
            endpoint.price_prompt_per_1k = _decimal(o["price_prompt"])
        if o["price_completion"] is not None:
            endpoint.price_completion_per_1k = _decimal(o["price_completion"])
        if o["no_seed"]:
            endpoint.supports_seed = False
        if endpoint.max_concurrency is not None and endpoint.max_concurrency < 1:
            raise CommandError("--max-concurrency must be at least 1")
        if endpoint.timeout_seconds is not None and endpoint.timeout_seconds <= 0:
            raise CommandError("--timeout must be above 0")
        try:
            endpoint.full_clean()
        except ValidationError as exc:
            problems = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items())
            raise CommandError(f"endpoint not saved: {problems}") from None
        try:
            preflight.require(endpoint, check=not o["no_check"])
        except preflight.PreflightFailed as exc:
            raise CommandError(f"endpoint not saved: {exc} (--no-check saves it anyway)") from None
        endpoint.save()
        key_note = ""
        if endpoint.api_key_env and not endpoint.api_key():
            key_note = f" (note: ${endpoint.api_key_env} is not set in this environment)"
        checked = "; pre-flight check skipped" if o["no_check"] else "; pre-flight check passed"
        self.stdout.write(self.style.SUCCESS(
            f"{'updated' if existing else 'added'} endpoint {endpoint.name}: {endpoint.model} at {endpoint.base_url} "
            f"({endpoint.api_style}){key_note}{checked}"))
