"""Model prompts: built by the item's own instrument, stored once, addressed by their hash."""
from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Iterable

from django.db import DEFAULT_DB_ALIAS
from django.utils import timezone

from surveys.condition_context import under
from surveys.instruments import Prompt
from surveys.models import Item, Study
from surveys.question_kinds import asking_kind

from . import row_sql, sqlite_writes
from .api_styles import PromptContent, adapter_for
from .persona_prompts import persona_prompt
from .question_prompts import check_item, check_kind
from .models import StoredPrompt
from .sqlite_writes import Statement


def build_prompt(study: Study, item: Item, few_shot: bool, demonstrations: list[Item] | None = None,
                 style: str = "standard", question: str = "") -> Prompt:
    """The instrument's prompt for ``item`` in ``style`` (one of its ``prompt_styles``), with the study's two
    demonstrations when ``few_shot``; ``question``: one of a study's ``[[questions]]`` (see ``asking_kind``)."""
    demos = study.demonstrations() if demonstrations is None else demonstrations
    share_study(study, item, *demos)
    return asking_kind(study, question).build_prompt(item, demos, few_shot, style)


def share_study(study: Study, *items: Item) -> None:
    """Give ``items`` the ``study`` object they belong to (the wording is the study's): one Study object, not a
    query per item."""
    study_field = Item._meta.get_field("study")
    for row in items:
        if row.study_id == study.pk and not study_field.is_cached(row):
            row.study = study


def prompt_for_run(run: Any, item: Item | None, sample_index: int = 0, demonstrations: list[Item] | None = None,
                   question: str = "", check: str = "") -> Prompt:
    """The prompt of one (item, sample, question) of ``run``: the instrument's, or for a self-refinement run its
    kind's refinement prompt (elicitation/refinement.py), which depends on the sample's draw. A run with personas asks sample
    ``persona index × samples per item + sample``: the sample's prompt with the persona's preamble
    (elicitation/persona_prompts.py); workers, ``--sync``, the stored prompt and the estimates all come here. A run
    under a cell (``run.condition``) renders the templates' ``condition`` as that cell's. A study with
    ``[[questions]]`` asks ``question`` alone, or all its questions at once (elicitation/question_prompts.py);
    ``question`` "" is the study's one question (its kind's prompt, as before). ``check``: the study's attention
    check of that key, asked of an agent with ``checks = true`` (no item, no demonstrations; the persona's preamble
    and the cell as for the items)."""
    if getattr(run, "refines_id", None) is not None:
        from .refinement import prompt

        return prompt(run, item, sample_index)
    if check:
        kind, item, demos = check_kind(run.study, check), check_item(run.study, check), []
    else:
        demos = run.study.demonstrations() if demonstrations is None else demonstrations
        share_study(run.study, item, *demos)
        kind = asking_kind(run.study, question)
    personas = getattr(run, "personas", None)
    with under(getattr(run, "condition", "")):  # a study with [[factors]]: worded as the run's cell's pages
        if not personas:
            return kind.prompt_for_sample(item, demos, run.few_shot, run.prompt_style, sample_index, run.seed)
        persona_index, sample = divmod(sample_index, max(1, run.samples_per_item))
        prompt = kind.prompt_for_sample(item, demos, run.few_shot, run.prompt_style, sample, run.seed)
    return persona_prompt(run, prompt, persona_index)


def prompt_content(prompt: Prompt, api_style: str) -> PromptContent:
    """What is sent in ``api_style``: e.g. the text (completions endpoints) or the message list (chat endpoints)."""
    return adapter_for(api_style).content(prompt)


def canonical_bytes(content: PromptContent) -> bytes:
    """The bytes that are hashed: the UTF-8 text itself, or the messages as compact, key-sorted JSON."""
    if isinstance(content, str):
        return content.encode("utf-8")
    return json.dumps(content, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def prompt_hash(content: PromptContent) -> str:
    """SHA-256 (hex) of the prompt as sent."""
    return hashlib.sha256(canonical_bytes(content)).hexdigest()


def store_prompt(content: PromptContent, api_style: str, sha: str | None = None) -> StoredPrompt:
    """The StoredPrompt for ``content`` (whose hash is ``sha``), created on first use (``store_prompts``)."""
    sha = sha or prompt_hash(content)
    return store_prompts({sha: content}, api_style)[sha]


def store_prompts(contents: dict[str, PromptContent], api_style: str) -> dict[str, StoredPrompt]:
    """The StoredPrompt of each content (by its hash), the new ones created: one SELECT for them all, and for
    those not stored yet one ``INSERT … ON CONFLICT DO NOTHING RETURNING`` (``stored_or_new``; safe when several
    workers race: the loser reads the winner's rows)."""
    found, insert = stored_or_new(contents, api_style)
    if insert is not None:
        adopt_ids(found.values(), sqlite_writes.execute(*insert)[1])
    raced = [sha for sha, stored in found.items() if stored.pk is None]  # another worker stored them first
    found.update(row_sql.stored_prompts(raced))
    return found


def stored_or_new(contents: dict[str, PromptContent],
                  api_style: str) -> tuple[dict[str, StoredPrompt], Statement | None]:
    """The StoredPrompt of each content (by its hash): those stored already (one SELECT), and new ones, not yet
    saved, with the ``INSERT … ON CONFLICT DO NOTHING RETURNING`` that stores them (None when there are none), for
    the worker to commit with its first claim, which names a new prompt by its hash (``row_sql.claim_statement``);
    ``adopt_ids`` then gives them their ids."""
    found = row_sql.stored_prompts(list(contents))
    now = timezone.now()
    new = [StoredPrompt(sha256=sha, api_style=api_style, content=content, created_at=now)
           for sha, content in contents.items() if sha not in found]
    found.update((stored.sha256, stored) for stored in new)
    return found, row_sql.insert_stored_prompts_statement(new) if new else None


def adopt_ids(prompts: Iterable[StoredPrompt], returned: Iterable[tuple[int, str]]) -> None:
    """Give the new ``prompts`` the ids their INSERT returned as (id, hash) (a prompt another worker stored first
    keeps none; it is named by its hash)."""
    inserted = dict((sha, pk) for pk, sha in returned)
    for prompt in prompts:
        if prompt.pk is None and prompt.sha256 in inserted:
            prompt.pk = inserted[prompt.sha256]
            prompt._state.adding, prompt._state.db = False, DEFAULT_DB_ALIAS


def approx_tokens(content: PromptContent) -> int:
    """Approximate token count: characters / 4 (rounded up), plus 4 per chat message for the role
    markup. Good to about ±25 % for English with GPT-style tokenizers; used for estimates and
    rate budgets only, never for billing (the endpoint's reported usage is what is stored)."""
    if isinstance(content, str):
        return math.ceil(len(content) / 4)
    return sum(math.ceil(len(m.get("content", "")) / 4) + 4 for m in content)


def render_for_display(content: Any) -> str:
    """A stored prompt as readable text (chat messages as "[role]" blocks)."""
    if isinstance(content, str):
        return content
    return "\n\n".join(f"[{m.get('role', '?')}]\n{m.get('content', '')}" for m in content)
