"""Sileo & Moens (2023), §3.3: WEP-Reasoning items — compositions of facts whose probabilities are given by WEPs.

Construction (the paper's Figure 1, as reconstructed here from §3.3 and its caption):

- **Round 1**: three facts A, B, C (subject / verb / object factoids, ``wep_reasoning_factoids.toml``; no subject,
  verb or object shared by two facts of an item, so they are independent). Each gets a WEP drawn uniformly from
  the 19 of Appendix A and that WEP's median as its probability; the premise states each as T_p(FACT) ("It is
  likely that John went to the kitchen.").
- **Round 2** (2 hops only): three more facts D, E, F. Each is conditioned on a composition of two distinct
  round-1 facts with an operator drawn from and / or / xor, with its own WEP: "If John went to the kitchen or
  Mary took the apple, it is likely that Sandra moved to the garden; otherwise it is impossible that Sandra
  moved to the garden." (ProbLog: ``c4 :- f1. c4 :- f2. 0.7::f4 :- c4.``)
- **Hypothesis**: a composition (and / or / xor) of two distinct facts of the last round: round 1 for 1 hop,
  round 2 for 2 hops ("either X or Y, but not both" for xor).

The hypothesis probability p is computed exactly by ProbLog (``problog`` 2.3, the reasoner the paper used) from
the item's program; :func:`enumerate_probability` recomputes it by summing over every possible world (the
tests compare the two). The valid verbalisation is T_p(HYPOTHESIS) with the WEP whose median is closest to p,
the distractor one with a WEP at least 40 points away (families/sileo/wep_scale.py); their order is drawn.

Each item is generated from its own ``random.Random(f"{seed}|{hops}|{index}")``, so item ``index`` is the same
whatever ``n`` and ``start`` are (``--start 100 --n 50`` continues a series of 100). Key:
``wr{hops}-s{seed}-{index:05d}``. ``extra`` holds the facts (``round1``, ``round2`` with their compositions), the hypothesis'
structure (``composition``: op and args), the ProbLog program, p, both WEPs, the two options and the valid key.
"""
from __future__ import annotations

import itertools
import logging
import random
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from families.sileo.instrument import verbalisation_fields
from surveys.designs.design import CliOption, Design
from families.sileo.wep_scale import WEP_MEDIANS, WEP_TEMPLATES, WEPS

DATA = Path(__file__).with_name("wep_reasoning_factoids.toml")
OPERATORS: tuple[str, ...] = ("and", "or", "xor")
DEFAULT_N = 100
DEFAULT_SEED = 0
MAX_N = 5000  # the paper's dataset size
HYPOTHESIS = "hypothesis"
DESIGN = Design("wep-reasoning", __name__, "verbalisation_choice",
                "Sileo & Moens: WEP-Reasoning items, 1 or 2 hops, exact probabilities with ProbLog",
                cli=(CliOption("--seed", "random seed", type=int),
                     CliOption("--hops", "reasoning steps", type=int, choices=(1, 2)),
                     CliOption("--n", "how many items", type=int),
                     CliOption("--start", "skip the first items of the series", type=int)))


@dataclass(frozen=True)
class Fact:
    id: str  # the ProbLog atom: f1…f6
    subject: str
    verb: str
    object: str

    @property
    def text(self) -> str:
        return f"{self.subject} {self.verb} {self.object}"


def load_factoids(path: Path = DATA) -> dict[str, Any]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {"subjects": list(data["subjects"]),
            "classes": {name: (list(c["verbs"]), list(c["objects"])) for name, c in data["classes"].items()}}


def draw_facts(rng: random.Random, count: int, factoids: dict[str, Any]) -> list[Fact]:
    """``count`` facts with pairwise distinct subjects, verbs and objects."""
    subjects = rng.sample(factoids["subjects"], count)
    left = {name: (list(verbs), list(objects)) for name, (verbs, objects) in factoids["classes"].items()}
    facts = []
    for i, subject in enumerate(subjects, start=1):
        name = rng.choice(sorted(n for n, (v, o) in left.items() if v and o))
        verbs, objects = left[name]
        verb = verbs.pop(rng.randrange(len(verbs)))
        obj = objects.pop(rng.randrange(len(objects)))
        facts.append(Fact(f"f{i}", subject, verb, obj))
    return facts


def compose(op: str, left: str, right: str) -> str:
    """Two facts joined by ``op`` in words (xor: "either X or Y, but not both")."""
    return {"and": f"{left} and {right}", "or": f"{left} or {right}",
            "xor": f"either {left} or {right}, but not both"}[op]


def template(wep: str, fact: str) -> str:
    """The WEP's template around ``fact``, lower case (inside a sentence)."""
    return WEP_TEMPLATES[wep].replace("[FACT]", fact)


def _clauses(head: str, op: str, a: str, b: str) -> list[str]:
    """ProbLog clauses making ``head`` true exactly when ``a op b``."""
    return {"and": [f"{head} :- {a}, {b}."], "or": [f"{head} :- {a}.", f"{head} :- {b}."],
            "xor": [f"{head} :- {a}, \\+{b}.", f"{head} :- \\+{a}, {b}."]}[op]


def _prob(p: float) -> str:
    return repr(float(p))


def program(structure: dict[str, Any]) -> str:
    """The ProbLog program of an item's ``structure`` (round1, round2, composition), querying ``hypothesis``."""
    lines = [f"{_prob(f['p'])}::{f['id']}." for f in structure["round1"]]
    for rule in structure["round2"]:
        condition = "c" + rule["id"][1:]
        lines += _clauses(condition, rule["op"], *rule["args"])
        lines.append(f"{_prob(rule['p'])}::{rule['id']} :- {condition}.")
    hyp = structure["composition"]
    lines += _clauses(HYPOTHESIS, hyp["op"], *hyp["args"])
    lines.append(f"query({HYPOTHESIS}).")
    return "\n".join(lines)


def problog_probability(source: str) -> float:
    """P(hypothesis) of a ProbLog program, computed exactly by ProbLog."""
    from problog import get_evaluatable
    from problog.program import PrologString

    logging.getLogger("problog").setLevel(logging.WARNING)  # its timings go to stderr at INFO
    result = get_evaluatable().create_from(PrologString(source)).evaluate()
    values = [float(v) for k, v in result.items() if str(k) == HYPOTHESIS]
    if len(values) != 1:
        raise ValueError(f"ProbLog returned no probability for {HYPOTHESIS!r}: {result}")
    return values[0]


def _holds(op: str, a: bool, b: bool) -> bool:
    return {"and": a and b, "or": a or b, "xor": a != b}[op]


def enumerate_probability(structure: dict[str, Any]) -> float:
    """P(hypothesis) by brute force: the sum, over every assignment of the independent choices (each round-1
    fact true or false; each round-2 rule firing or not), of the assignment's probability where the hypothesis
    holds. Round-2 fact j is true iff its composition holds and its rule fires."""
    choices = [(f["id"], float(f["p"])) for f in structure["round1"]]
    choices += [("r" + r["id"][1:], float(r["p"])) for r in structure["round2"]]
    total = 0.0
    for world in itertools.product((True, False), repeat=len(choices)):
        weight = 1.0
        truth: dict[str, bool] = {}
        for (name, p), value in zip(choices, world):
            weight *= p if value else 1.0 - p
            truth[name] = value
        for rule in structure["round2"]:
            a, b = rule["args"]
            truth[rule["id"]] = _holds(rule["op"], truth[a], truth[b]) and truth["r" + rule["id"][1:]]
        hyp = structure["composition"]
        if _holds(hyp["op"], truth[hyp["args"][0]], truth[hyp["args"][1]]):
            total += weight
    return total


def build_structure(rng: random.Random, hops: int, factoids: dict[str, Any]) -> tuple[dict[str, Any], list[Fact]]:
    """The random part of one item: facts, WEPs, operators and the hypothesis' arguments."""
    facts = draw_facts(rng, 3 * hops, factoids)
    round1 = []
    for fact in facts[:3]:
        wep = rng.choice(WEPS)
        round1.append({"id": fact.id, "text": fact.text, "subject": fact.subject, "verb": fact.verb,
                       "object": fact.object, "wep": wep, "p": WEP_MEDIANS[wep] / 100})
    round2 = []
    for fact in facts[3:]:
        wep = rng.choice(WEPS)
        round2.append({"id": fact.id, "text": fact.text, "subject": fact.subject, "verb": fact.verb,
                       "object": fact.object, "wep": wep, "p": WEP_MEDIANS[wep] / 100,
                       "op": rng.choice(OPERATORS), "args": rng.sample([f["id"] for f in round1], 2)})
    last = round2 if hops == 2 else round1
    hypothesis = {"op": rng.choice(OPERATORS), "args": rng.sample([f["id"] for f in last], 2)}
    return {"round1": round1, "round2": round2, "composition": hypothesis}, facts


def premise_text(structure: dict[str, Any]) -> str:
    texts = {f["id"]: f["text"] for f in structure["round1"] + structure["round2"]}
    sentences = [f"{template(f['wep'], f['text'])}." for f in structure["round1"]]
    for rule in structure["round2"]:
        condition = compose(rule["op"], *(texts[a] for a in rule["args"]))
        sentences.append(f"if {condition}, {template(rule['wep'], rule['text'])}; "
                         f"otherwise it is impossible that {rule['text']}.")
    return " ".join(s[0].upper() + s[1:] for s in sentences)


def hypothesis_text(structure: dict[str, Any]) -> str:
    texts = {f["id"]: f["text"] for f in structure["round1"] + structure["round2"]}
    hyp = structure["composition"]
    return compose(hyp["op"], *(texts[a] for a in hyp["args"]))


def make_item(seed: int, hops: int, index: int, factoids: dict[str, Any]) -> dict[str, Any]:
    """Item fields of item ``index`` of the (seed, hops) series."""
    rng = random.Random(f"{seed}|{hops}|{index}")
    structure, _ = build_structure(rng, hops, factoids)
    source = program(structure)
    p = round(min(1.0, max(0.0, problog_probability(source))), 12)
    dataset = "wep-reasoning-1hop" if hops == 1 else "wep-reasoning-2hops"
    fields = verbalisation_fields(premise_text(structure), hypothesis_text(structure), p, rng, dataset,
                                  hops=hops, seed=seed, index=index, program=source, **structure)
    key = f"wr{hops}-s{seed}-{index:05d}"
    return {"key": key, "statement_id": key, "context": dataset, "language": "en", **fields}


def generate(study: Any = None, hops: int | None = None, n: int | None = None, seed: int | None = None,
             start: int | None = None) -> list[dict[str, Any]]:
    """Items ``start`` … ``start + n − 1`` of the WEP-Reasoning series for ``hops`` (1 or 2) and ``seed``."""
    if hops not in (1, 2):
        raise ValueError("wep-reasoning needs --hops 1 or --hops 2")
    n = DEFAULT_N if n is None else n
    if not 1 <= n <= MAX_N:
        raise ValueError(f"--n must be between 1 and {MAX_N}, not {n}")
    start = 0 if start is None else start
    if start < 0:
        raise ValueError(f"--start must be 0 or more, not {start}")
    seed = DEFAULT_SEED if seed is None else seed
    factoids = load_factoids()
    return [make_item(seed, hops, index, factoids) for index in range(start, start + n)]
