"""The text completions style: ``POST …/completions`` with the prompt as one text, continued by the model. It
continues a text, so it also serves the full-distribution mode (one token and its top-k alternatives after a
prefix, elicitation/full_distribution.py) and the likelihood mode (the log-probabilities of the prompt's own
tokens with ``echo``, elicitation/likelihood.py).

Those two modes send through the openai client's ``completions.create`` (a streamed request needs its stream
handling), as they always have: their bodies are the client's, in its own key order."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..outcomes import TokenLogprobs
from .base import ApiStyleAdapter, PromptContent, openai

if TYPE_CHECKING:
    from surveys.instruments import Prompt


class CompletionsStyle(ApiStyleAdapter):
    name = "completions"
    label = "text completions"
    path = "completions"
    content_key = "prompt"
    continues_text = True

    def content(self, prompt: Prompt) -> PromptContent:
        return prompt.text

    def probe_content(self) -> PromptContent:
        return "OK"

    def top_logprobs_params(self, k: int) -> dict[str, Any]:
        return {"logprobs": k}

    def reply_type(self) -> type:
        return openai.types.Completion

    def text(self, choice: Any) -> str | None:
        return getattr(choice, "text", None)

    def positions(self, choice: Any) -> list[TokenLogprobs] | None:
        logprobs = getattr(choice, "logprobs", None)
        tokens = getattr(logprobs, "tokens", None) if logprobs is not None else None
        if tokens is None:
            return None
        token_logprobs = logprobs.token_logprobs or [None] * len(tokens)
        tops = logprobs.top_logprobs or [None] * len(tokens)
        return [TokenLogprobs(tok, float(lp) if lp is not None else float("nan"),
                              [(t, float(v)) for t, v in (top or {}).items()])
                for tok, lp, top in zip(tokens, token_logprobs, tops)]

    def next_token(self, client: Any, model: str, text: str, k: int, extra: dict[str, Any],
                   stream: bool) -> list[Any]:
        kwargs = dict(model=model, prompt=text, max_tokens=1, temperature=0, logprobs=k, **extra)
        if stream:
            return list(client.completions.create(stream=True, stream_options={"include_usage": True}, **kwargs))
        return [client.completions.create(**kwargs)]

    def reset_cache(self, client: Any, model: str, text: str, extra: dict[str, Any]) -> Any:
        return client.completions.create(model=model, prompt=text, max_tokens=1, temperature=0, **extra)

    def top_alternatives(self, choice: Any) -> dict[str, float] | None:
        logprobs = getattr(choice, "logprobs", None)
        tops = getattr(logprobs, "top_logprobs", None) if logprobs is not None else None
        if not tops or tops[0] is None:
            return None
        top = dict(tops[0])
        tokens = getattr(logprobs, "tokens", None) or []
        token_lps = getattr(logprobs, "token_logprobs", None) or []
        if tokens and token_lps and token_lps[0] is not None:
            top.setdefault(tokens[0], token_lps[0])  # the chosen token, should the list omit it
        return top

    def echo(self, client: Any, model: str, text: str, params: dict[str, Any]) -> Any:
        return client.completions.create(model=model, prompt=text, **params)

    def prompt_logprobs(self, choice: Any) -> tuple[list[int] | None, list[float | None] | None]:
        logprobs = getattr(choice, "logprobs", None)
        if logprobs is None:
            return None, None
        return getattr(logprobs, "text_offset", None), getattr(logprobs, "token_logprobs", None)
