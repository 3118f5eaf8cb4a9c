"""The interface of an endpoint's API style: everything that differs between the ways an OpenAI-compatible
server is spoken to (``POST …/chat/completions`` with messages, ``POST …/completions`` with a prompt text).

An adapter builds what is sent — the content a prompt becomes, the request body, the parameters of the
top-logprobs mode, the pre-flight probe — and reads what comes back (text, per-position logprobs, token counts,
finish reason, fingerprint). A style that *continues a text* (``continues_text``) can also serve the two modes that
read the model's log-probabilities of a text: the full distribution (one token with its top-k alternatives after a
prefix) and the likelihood mode (the log-probabilities of the prompt's own tokens, ``echo``). The worker, the
estimate, the pre-flight check, the prompt preview and those two modes ask the endpoint's adapter
(``elicitation.api_styles.adapter_for``) and never branch on the style.

This module imports nothing of the models (the run settings, which the models call, ask an adapter whether it
continues a text), so the errors a reply can raise live here; ``elicitation.client`` re-exports them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from config.lazy_import import lazy_module

from ..outcomes import Completion, TokenLogprobs

if TYPE_CHECKING:
    from surveys.instruments import Prompt

openai = lazy_module("openai")
PromptContent = str | list[dict[str, str]]  # what is sent and stored: a text, or a list of messages
# what ``create`` of the openai client's resources pass its ``post`` besides the body: the request is
# authenticated with the API key (a bearer token)
CREATE_OPTIONS: Any = {"security": {"bearer_auth": True}}


class MalformedResponse(Exception):
    """The endpoint answered 200 with a body that is not a completion (a body that is not JSON at all is not
    repeated in the message: see ``elicitation.client.not_an_api_response``)."""

    def __init__(self, body: Any):
        self.body = body
        shown = f"{len(body)} characters that are not JSON" if isinstance(body, (str, bytes)) else str(body)[:300]
        super().__init__(f"malformed response (not a completion): {shown}")


class Unsupported(Exception):
    """The endpoint cannot do what the mode needs (e.g. it returns no logprobs); retrying will not help."""


class ApiStyleAdapter:
    """One API style. Subclasses set the class attributes and implement the methods marked so; the registry
    (``elicitation.api_styles.register``) finds them by ``name``, the value stored in ``ModelEndpoint.api_style``
    and ``StoredPrompt.api_style``."""

    name: ClassVar[str]  # the stored value, e.g. "chat"
    label: ClassVar[str]  # shown beside it, e.g. "chat completions"
    path: ClassVar[str]  # where requests go, relative to the endpoint's base URL, e.g. "chat/completions"
    content_key: ClassVar[str]  # the body's key that holds the content ("messages", "prompt")
    continues_text: ClassVar[bool] = False  # serves the full-distribution and likelihood modes

    # --- what is sent ------------------------------------------------------------------------------------------
    def content(self, prompt: Prompt) -> PromptContent:
        """What is sent (and stored, and hashed) for ``prompt``: its text or its messages."""
        raise NotImplementedError

    def probe_content(self) -> PromptContent:
        """The content of the pre-flight check's one-token request (elicitation/preflight.py)."""
        raise NotImplementedError

    def top_logprobs_params(self, k: int) -> dict[str, Any]:
        """The parameters that ask for ``k`` alternatives at each generated position (top-logprobs mode)."""
        raise NotImplementedError

    def body(self, model: str, content: PromptContent, params: dict[str, Any]) -> dict[str, Any]:
        """The request body: the model, the content under ``content_key``, then ``params`` as they are."""
        return {"model": model, self.content_key: content, **params}

    def reply_type(self) -> type:
        """The openai type a reply is read into (``cast_to`` of the client's ``post``)."""
        raise NotImplementedError

    def send(self, client: Any, body: dict[str, Any]) -> Any:
        """Post a non-streaming ``body`` of plain JSON values (strings, numbers, booleans, and lists and dicts of
        them: what the modes send) through the openai ``client``'s own ``post``, as it is. The resource's
        ``create`` would first walk the body against its typed parameters, which leaves such a body as it is and
        costs as much CPU as the rest of the request (1–3 ms for a few-shot chat prompt); the request sent is
        the same, headers and body (tests/test_elicitation_modes.py holds the two to it)."""
        return client.post(f"/{self.path}", cast_to=self.reply_type(), body=body, options=CREATE_OPTIONS)

    # --- what comes back ---------------------------------------------------------------------------------------
    def text(self, choice: Any) -> str | None:
        """The generated text of one choice (None when it has none)."""
        raise NotImplementedError

    def positions(self, choice: Any) -> list[TokenLogprobs] | None:
        """The generated tokens of one choice with their logprobs and top alternatives (None: not returned)."""
        raise NotImplementedError

    def read(self, reply: Any) -> Completion:
        """The parts of ``reply`` that are stored; MalformedResponse if it is not a completion."""
        choices = getattr(reply, "choices", None)
        if isinstance(reply, (str, bytes)) or not choices:
            raise MalformedResponse(reply)
        choice = choices[0]
        text = self.text(choice)
        if text is None and getattr(choice, "finish_reason", None) is None:
            raise MalformedResponse(reply)
        prompt_tokens, completion_tokens = usage_of(reply)
        return Completion(
            text=text or "",
            positions=self.positions(choice),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            system_fingerprint=fingerprint_of(reply),
            finish_reason=getattr(choice, "finish_reason", None) or "",
        )

    def complete(self, client: Any, model: str, content: PromptContent, params: dict[str, Any]) -> Completion:
        """One request and its reply read (``send``, ``read``)."""
        return self.read(self.send(client, self.body(model, content, params)))

    # --- reading a text's log-probabilities (styles that continue a text) ------------------------------------
    def next_token(self, client: Any, model: str, text: str, k: int, extra: dict[str, Any],
                   stream: bool) -> list[Any]:
        """The reply (streamed: its chunks) to one request for the one token after ``text`` with its top-``k``
        alternatives (temperature 0, ``extra`` sent too): the full-distribution mode's request."""
        raise Unsupported(f"the {self.name} API style does not continue a text (full distribution)")

    def reset_cache(self, client: Any, model: str, text: str, extra: dict[str, Any]) -> Any:
        """One one-token request for ``text`` that only replaces what the server has cached (full distribution)."""
        raise Unsupported(f"the {self.name} API style does not continue a text (full distribution)")

    def top_alternatives(self, choice: Any) -> dict[str, float] | None:
        """The top-k alternatives (token text → logprob) at the first generated position of ``choice``."""
        raise Unsupported(f"the {self.name} API style does not continue a text (full distribution)")

    def echo(self, client: Any, model: str, text: str, params: dict[str, Any]) -> Any:
        """The reply to one request that echoes ``text`` with its tokens' log-probabilities (likelihood mode)."""
        raise Unsupported(f"the {self.name} API style cannot score a text (likelihood)")

    def prompt_logprobs(self, choice: Any) -> tuple[list[int] | None, list[float | None] | None]:
        """(text offsets, log-probabilities) of the echoed tokens of ``choice`` (likelihood mode)."""
        raise Unsupported(f"the {self.name} API style cannot score a text (likelihood)")


def usage_of(reply: Any) -> tuple[int | None, int | None]:
    """(prompt tokens, completion tokens) the reply reports (None for what it does not)."""
    usage = getattr(reply, "usage", None)
    return getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)


def fingerprint_of(reply: Any) -> str:
    """The reply's ``system_fingerprint`` ("" when it has none)."""
    return getattr(reply, "system_fingerprint", None) or ""
