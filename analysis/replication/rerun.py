"""The package's stored prompts asked again of another endpoint (``reproduce --rerun-models``), with each answer's
recorded parameters, through the elicitation client (elicitation/client.py, elicitation/modes.py), and how far
the new answers are from the packaged ones, per run:

- ``agreement``: the share of answers whose parsed value (number, choice, interval or text) is identical;
- sampled runs also ``distance``: per item, the Wasserstein-1 distance between the packaged and the new numbers
  (``scipy.stats.wasserstein_distance``), or for choices the total variation distance ½ Σ |p - q| of the option
  shares, averaged over items.

Runs in other modes (log-probabilities, full distribution, likelihood) and self-refinement runs are listed as
not asked again. Nothing is written to the database.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

PARSED = ("value", "choice", "lower", "upper", "text")


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
    """(mean over items of the distance between packaged and new answers, its name)."""
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


def ask_again(run: Any, endpoint: Any, client: Any) -> list[tuple[Any, tuple, tuple]]:
    """(item, packaged answer, new answer) for each answer of ``run`` that has a stored prompt."""
    from elicitation.client import RequestFailed, call_with_retries
    from elicitation.modes import complete, parse_text, request_params

    kind = run.study.kind
    pairs = []
    for row in run.responses.filter(status__in=("ok", "unparseable"), prompt__isnull=False) \
            .select_related("item", "prompt").order_by("item_id", "sample_index"):
        params = dict(row.params) if row.params else request_params(run, endpoint, row.sample_index)
        if not endpoint.supports_seed:
            params.pop("seed", None)
        content = row.prompt.content

        def attempt(content=content, params=params):
            return complete(client.openai, endpoint, content, params)

        try:
            done = call_with_retries(attempt, max_retries=endpoint.max_retries, base=endpoint.retry_backoff_seconds,
                                     cap=endpoint.retry_backoff_max_seconds, timeout=endpoint.timeout_seconds)
            new = parsed(parse_text(kind, done.value, row.item))
        except RequestFailed:
            new = ("failed",)
        pairs.append((row.item_id, parsed(row), new))
    return pairs


def rerun(study: Any, endpoint: Any) -> list[dict[str, Any]]:
    """Per run of ``study``: its agent, mode, answers asked again, agreement, and (sampled) the distance."""
    from elicitation.client import EndpointClient

    client = EndpointClient(endpoint)
    out = []
    try:
        for run in study.runs.order_by("pk"):
            row = {"run": run.pk, "agent": run.agent or run.name or run.endpoint.name, "mode": run.mode}
            if run.mode not in ("greedy", "sampled") or run.refines_id is not None:
                out.append({**row, "skipped": f"mode {run.mode}{' (self-refinement)' if run.refines_id else ''} "
                                              "is not asked again"})
                continue
            pairs = ask_again(run, endpoint, client)
            same = sum(old == new for _, old, new in pairs)
            row.update(answers=len(pairs), identical=same, agreement=same / len(pairs) if pairs else None,
                       failed=sum(new == ("failed",) for _, _, new in pairs))
            if run.mode == "sampled":
                row["distance"], row["distance_name"] = distance(pairs)
            out.append(row)
    finally:
        client.close()
    return out
