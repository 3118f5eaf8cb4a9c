"""The package's stored prompts asked again of another endpoint (``reproduce --rerun-models``), with each answer's
recorded parameters, through the elicitation client (elicitation/client.py, elicitation/modes.py), and how far
the new answers are from the packaged ones, per run:

- ``agreement``: the share of answers whose parsed value (number, choice, interval or text) is identical;
- sampled runs also ``distance``: per item, the Wasserstein-1 distance between the packaged and the new numbers
  (``scipy.stats.wasserstein_distance``), or for choices the total variation distance ½ Σ |p - q| of the option
  shares, averaged over items.

Runs in other modes (log-probabilities, full distribution, likelihood) and self-refinement runs are listed as
not asked again. Nothing is written to the database.

Nothing is sent before it was shown and confirmed (issue 30, point 6): :func:`plan` lists every request with its
parameters and estimates the tokens, refusing parameters the platform would never send — a name other than
``temperature``, ``max_tokens`` and ``seed`` (``n``, ``model``: the model is always the reproducer's endpoint's),
or a value outside the bounds of the platform's own run forms (elicitation/run_settings.py), or a run with more
samples per item than they allow; ``manage.py reproduce`` shows it and asks; :func:`rerun` then sends exactly
the confirmed plan's requests, checking them once more.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

PARSED = ("value", "choice", "lower", "upper", "text")
#: the request parameters a greedy or sampled run sends (elicitation/modes.py request_params); nothing else is sent
SENT = ("temperature", "max_tokens", "seed")


class PlanRefused(ValueError):
    """The rerun would send what the platform never sends; ``problems`` name each answer and parameter."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems[:20]))


def param_problems(params: Any, where: str) -> list[str]:
    """Why ``params`` (one request's parameters, as packaged) may not be sent: names outside :data:`SENT`, values
    outside the run forms' bounds."""
    from elicitation.run_settings import MAX_TEMPERATURE, MAX_TOKENS, SEED_BOUND

    if not isinstance(params, dict):
        return [f"{where}: the parameters are not a JSON object"]
    out = [f"{where}: parameter {key!r} = {str(value)[:40]} is not one the platform sends (it sends "
           f"{', '.join(SENT)}; the model is your endpoint's)" for key, value in params.items() if key not in SENT]

    def number(key: str, low: float, high: float, whole: bool) -> None:
        value = params[key]
        kind = int if whole else (int, float)
        if isinstance(value, bool) or not isinstance(value, kind) or not low <= value <= high:
            out.append(f"{where}: {key} = {str(value)[:40]} is outside the platform's bounds ({low} to {high})")

    if "temperature" in params:
        number("temperature", 0, MAX_TEMPERATURE, whole=False)
    if "max_tokens" in params:
        number("max_tokens", 1, MAX_TOKENS, whole=True)
    if "seed" in params:
        number("seed", -SEED_BOUND, SEED_BOUND, whole=True)
    return out


def run_problems(run: Any) -> list[str]:
    """Why ``run``'s own settings are outside the run forms' bounds (samples per item, temperature, max tokens)."""
    from elicitation.run_settings import MAX_SAMPLES

    out = [] if 1 <= run.samples_per_item <= MAX_SAMPLES else [
        f"run {run.pk}: {run.samples_per_item} samples per item, outside the platform's bounds (1 to {MAX_SAMPLES})"]
    return out + param_problems({"temperature": run.temperature, "max_tokens": run.max_tokens}, f"run {run.pk}")


def parsed(row: Any) -> tuple:
    """The parsed answer of a ModelResponse or an Outcome ((None, …) when unparseable)."""
    if getattr(row, "status", "ok") != "ok":
        return (None,)
    values = (getattr(row, name, None) for name in PARSED)
    return tuple(None if v == "" else v for v in values)


def total_variation(a: list[Any], b: list[Any]) -> float:
    """½ Σ |p(x) − q(x)| of the shares of each answer in ``a`` and ``b``."""
    keys = set(a) | set(b)
    return 0.5 * sum(abs(a.count(k) / len(a) - b.count(k) / len(b)) for k in keys)


def distance(pairs: list[tuple[Any, tuple, tuple]]) -> tuple[float | None, str]:
    """(mean over items (each question of an item apart) of the distance between packaged and new answers, its
    name)."""
    from scipy.stats import wasserstein_distance

    by_item: dict[Any, tuple[list, list]] = defaultdict(lambda: ([], []))
    for item, old, new in pairs:
        by_item[item][0].append(old)
        by_item[item][1].append(new)
    answers = [v for _, o, n in pairs for v in (o, n) if len(v) == len(PARSED)]
    numeric = bool(answers) and all(v[0] is not None and v[1] is None for v in answers)
    values = []
    for old, new in by_item.values():
        if numeric:
            a = [o[0] for o in old if o[0] is not None]
            b = [n[0] for n in new if n[0] is not None]
            if a and b:
                values.append(float(wasserstein_distance(a, b)))
        else:
            values.append(total_variation(old, new))
    name = "wasserstein-1" if numeric else "total variation"
    return (sum(values) / len(values) if values else None), name


def asked_runs(study: Any) -> list[tuple[Any, str | None]]:
    """(run, why it is not asked again or None) for each run of ``study``, in order."""
    out = []
    for run in study.runs.order_by("pk"):
        skipped = None
        if run.mode not in ("greedy", "sampled") or run.refines_id is not None:
            skipped = f"mode {run.mode}{' (self-refinement)' if run.refines_id else ''} is not asked again"
        out.append((run, skipped))
    return out


def answers_of(run: Any) -> Any:
    """The answers of ``run`` that are asked again: those with a stored prompt, in a fixed order."""
    return run.responses.filter(status__in=("ok", "unparseable"), prompt__isnull=False, check_key="") \
        .select_related("item", "prompt").order_by("item_id", "sample_index", "pk")


def packaged_params(row: Any, run: Any, endpoint: Any) -> dict[str, Any]:
    """The parameters ``row`` recorded (or its run's settings give), without a seed for an endpoint that takes none."""
    from elicitation.modes import request_params

    params = dict(row.params) if isinstance(row.params, dict) and row.params else request_params(run, endpoint,
                                                                                                 row.sample_index)
    if not endpoint.supports_seed:
        params.pop("seed", None)
    return params


def plan(study: Any, endpoint: Any) -> dict[str, Any]:
    """Every request the rerun would send (run, answer, parameters), the tokens it would take (prompt tokens
    ≈ characters / 4; completion tokens at most max_tokens) and the problems that refuse it (empty: none)."""
    from elicitation.prompts import approx_tokens

    requests, problems, prompt_tokens, completion_tokens = [], [], 0, 0
    for run, skipped in asked_runs(study):
        if skipped:
            continue
        problems += run_problems(run)
        for row in answers_of(run):
            params = packaged_params(row, run, endpoint)
            problems += param_problems(params, f"data/model_answers.jsonl answer {row.pk} (run {run.pk})")
            requests.append({"run": run.pk, "answer": row.pk, "params": params})
            prompt_tokens += approx_tokens(row.prompt.content)
            max_tokens = params.get("max_tokens") if isinstance(params, dict) else None
            completion_tokens += max_tokens if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) else 0
    return {"requests": requests, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "problems": problems}


def ask_again(run: Any, endpoint: Any, client: Any, approved: dict[int, dict[str, Any]]) -> list[tuple[Any, tuple, tuple]]:
    """(item, packaged answer, new answer) for each answer of ``run`` that has a stored prompt, asked with the
    ``approved`` parameters (answer id → parameters) and nothing else."""
    from elicitation.client import RequestFailed, call_with_retries
    from elicitation.modes import complete
    from elicitation.question_prompts import question_outcome
    from surveys.question_kinds import asks_together

    together = asks_together(run.study)
    replies: dict[tuple[int, int], Any] = {}  # asked together: one request per (item, sample), as the run asked
    pairs = []
    for row in answers_of(run):
        if row.pk not in approved:
            raise PlanRefused([f"answer {row.pk} (run {run.pk}) is not in the confirmed plan"])
        params = {k: v for k, v in approved[row.pk].items() if k in SENT}
        content = row.prompt.content

        def attempt(content=content, params=params):
            return complete(client.openai, endpoint, content, params)

        try:
            asked = (row.item_id, row.sample_index)
            if together and asked in replies:
                done = replies[asked]
            else:
                done = call_with_retries(attempt, max_retries=endpoint.max_retries, base=endpoint.retry_backoff_seconds,
                                         cap=endpoint.retry_backoff_max_seconds, timeout=endpoint.timeout_seconds)
                replies[asked] = done
            new = parsed(question_outcome(run.study, row.question, done.value, row.item))
        except RequestFailed:
            new = ("failed",)
        pairs.append(((row.item_id, row.question) if row.question else row.item_id, parsed(row), new))
    return pairs


def rerun(study: Any, endpoint: Any, confirmed: dict[str, Any]) -> list[dict[str, Any]]:
    """Per run of ``study``: its agent, mode, answers asked again, agreement, and (sampled) the distance; only the
    ``confirmed`` plan's requests are sent, each checked again (PlanRefused before the first one otherwise)."""
    from elicitation.client import EndpointClient

    approved = {int(r["answer"]): r["params"] for r in confirmed["requests"]}
    problems = [p for r in confirmed["requests"] for p in param_problems(r["params"], f"answer {r['answer']}")]
    if problems:
        raise PlanRefused(problems)
    client = EndpointClient(endpoint)
    out = []
    try:
        for run, skipped in asked_runs(study):
            row = {"run": run.pk, "agent": run.agent or run.name or run.endpoint.name, "mode": run.mode}
            if skipped:
                out.append({**row, "skipped": skipped})
                continue
            pairs = ask_again(run, endpoint, client, approved)
            same = sum(old == new for _, old, new in pairs)
            row.update(answers=len(pairs), identical=same, agreement=same / len(pairs) if pairs else None,
                       failed=sum(new == ("failed",) for _, _, new in pairs))
            if run.mode == "sampled":
                row["distance"], row["distance_name"] = distance(pairs)
            out.append(row)
    finally:
        client.close()
    return out
