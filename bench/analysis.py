"""Benchmark of the analysis pipeline on synthetic answers (1,000,000 by default).

    .venv/bin/python bench/analysis.py [--rows 1000000] [--sample 100000] [--seed 0] [--naive-full]

Prints: the time and peak memory of the full metric report (Belem summary and per-expression tables
with the attention filter, Human Individual, knowledge-bias gaps, and the Tang KL/Brunner–Munzel
table) on ``--rows`` answers; the same report by a straightforward per-row Python implementation
(loops over rows, dict counts) on ``--sample`` answers, checked to give the same numbers, and the
speed ratio; then the export benchmark (:func:`bench_export`).
"""
from __future__ import annotations

import argparse
import math
import resource
import statistics
import sys
import time
import tracemalloc
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# Run as a script, this file's folder comes first on sys.path and would shadow the ``analysis`` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

from families.belem.metrics.tables import BelemAnalysis, analyse_belem  # noqa: E402
from families.tang.metrics.divergence import tang_table  # noqa: E402

EXPRESSIONS = ("almost certain", "highly likely", "very likely", "likely", "probable", "somewhat likely",
               "somewhat unlikely", "uncertain", "possible", "unlikely", "not likely", "doubtful",
               "very unlikely", "highly unlikely")
# Rough human means and spreads per expression (shaped like Belem et al.'s Fig. 4).
HUMAN_MEAN = dict(zip(EXPRESSIONS, (92, 85, 80, 70, 68, 62, 33, 48, 50, 22, 20, 22, 12, 8)))
HUMAN_SD = dict(zip(EXPRESSIONS, (6, 8, 9, 10, 12, 11, 10, 12, 15, 9, 9, 11, 7, 6)))
CONTROL_MEAN, CONTROL_SD = 88, 10
MODELS = {  # name: (bias, noise sd, share unparseable, share distribution-mode answers)
    "gpt-4": (0, 3, 0.001, 0.0), "gpt-4o": (-4, 4, 0.002, 0.0), "chatgpt": (3, 6, 0.01, 0.0),
    "llama3-70b": (2, 5, 0.005, 0.0), "mixtral-8x22b": (-2, 7, 0.01, 0.0), "gemini": (1, 4, 0.003, 0.0),
    "olmo-7b": (10, 20, 0.05, 0.0), "gpt-4o-logprobs": (-3, 5, 0.0, 1.0),
}
ANSWERS_PER_PARTICIPANT = 2 * len(EXPRESSIONS) + 2  # two per expression and two controls
SPAM_SHARE = 0.05
COLUMNS = ["respondent", "agent", "label", "value", "truth", "dist"]


def _snap(values: np.ndarray) -> np.ndarray:
    return np.clip(np.round(values / 5) * 5, 0, 100)


def _humans(rng: np.random.Generator, n_people: int, verifiable: bool, prefix: str) -> pd.DataFrame:
    labels = np.array(list(np.repeat(EXPRESSIONS, 2)) + ["control", "control"])
    lab = np.tile(labels, n_people)
    person = np.repeat(np.arange(n_people), len(labels))
    mean = pd.Series(HUMAN_MEAN | {"control": CONTROL_MEAN}).reindex(lab).to_numpy(float)
    sd = pd.Series(HUMAN_SD | {"control": CONTROL_SD}).reindex(lab).to_numpy(float)
    truth = np.full(lab.size, "", dtype=object)
    if verifiable:  # one true and one false statement per expression (and per control pair)
        truth = np.tile(np.array(["true", "false"] * (len(labels) // 2), dtype=object), n_people)
        mean = mean + np.where(truth == "true", 4.0, -4.0)
    bias = rng.normal(0, 5, n_people)[person]
    value = _snap(mean + bias + rng.normal(0, 1, lab.size) * sd)
    spam = rng.random(n_people) < SPAM_SHARE
    spam_rows = spam[person]
    value[spam_rows] = rng.integers(0, 21, spam_rows.sum()) * 5.0
    ids = np.char.add(prefix, np.arange(n_people).astype(str))[person]
    return pd.DataFrame({"respondent": ids, "agent": "human", "label": lab, "value": value, "truth": truth,
                         "dist": None})


def _models(rng: np.random.Generator, n_rows: int, verifiable: bool, prefix: str) -> pd.DataFrame:
    parts = []
    per_model = n_rows // len(MODELS)
    for m, (name, (bias, sd, unparsed, dist_share)) in enumerate(MODELS.items()):
        n = per_model if m < len(MODELS) - 1 else n_rows - per_model * (len(MODELS) - 1)
        lab = rng.choice(np.array(EXPRESSIONS + ("control",)), n, p=[2 / 30] * 14 + [2 / 30])
        mean = pd.Series(HUMAN_MEAN | {"control": CONTROL_MEAN}).reindex(lab).to_numpy(float) + bias
        truth = np.full(n, "", dtype=object)
        if verifiable:
            truth = np.where(rng.random(n) < 0.5, "true", "false").astype(object)
            mean = mean + np.where(truth == "true", 10.0, -10.0)
        value = _snap(mean + rng.normal(0, sd, n))
        value[rng.random(n) < unparsed] = np.nan
        dist = np.full(n, None, dtype=object)
        use = rng.random(n) < dist_share
        if use.any():
            centres = np.arange(21) * 5.0
            logits = -((centres[None, :] - mean[use, None]) ** 2) / (2 * sd ** 2)
            probs = np.exp(logits - logits.max(axis=1, keepdims=True))
            probs /= probs.sum(axis=1, keepdims=True)
            numeric = probs * (1 - rng.uniform(0, 0.2, use.sum()))[:, None]  # some mass on non-numbers
            for i, row in zip(np.flatnonzero(use), numeric):  # an object column of arrays
                dist[i] = row
            value[use] = np.nan
        runs = np.char.add(f"{prefix}{name}-run", rng.integers(0, 3, n).astype(str))
        parts.append(pd.DataFrame({"respondent": runs, "agent": name, "label": lab, "value": value,
                                   "truth": truth, "dist": dist}))
    return pd.concat(parts, ignore_index=True)


def make_answers(n_rows: int = 1_000_000, seed: int = 0, human_share: float = 0.5) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Synthetic (non-verifiable, verifiable) answers tables with about ``n_rows`` rows in all:
    half per statement set; in each, ``human_share`` from participants (30 answers each, 5% spammers)
    and the rest from the models of :data:`MODELS` (one answers in distribution mode)."""
    rng = np.random.default_rng(seed)
    per_set = n_rows // 2
    people = max(2, int(per_set * human_share) // ANSWERS_PER_PARTICIPANT)
    sets = []
    for verifiable, prefix in ((False, "nv-"), (True, "v-")):
        humans = _humans(rng, people, verifiable, prefix + "p")
        models = _models(rng, per_set - len(humans), verifiable, prefix)
        sets.append(pd.concat([humans, models], ignore_index=True)[COLUMNS])
    return sets[0], sets[1]


# --- the report, vectorised (the platform's code) ---------------------------------------------------
def full_report(nv: pd.DataFrame, v: pd.DataFrame) -> tuple[BelemAnalysis, pd.DataFrame]:
    """Everything the report shows: the Belem analysis and the Tang comparison of the NV set."""
    belem = analyse_belem(nv, v)
    tang = tang_table(nv)
    return belem, tang


# --- the same definitions, row by row -----------------------------------------------------------------
def _bin(v: float) -> int:
    return min(100, math.floor((v + 2.5) / 5) * 5)


def _w1(a: dict[int, float], b: dict[int, float]) -> float:
    bins = list(range(0, 101, 5))
    return float(stats.wasserstein_distance(bins, bins, [a.get(k, 0.0) for k in bins], [b.get(k, 0.0) for k in bins]))


def _mean_of(hist: dict[int, float]) -> float:
    total = sum(hist.values())
    return sum(k * p for k, p in hist.items()) / total


def naive_report(nv: pd.DataFrame, v: pd.DataFrame, threshold: float = 0.2) -> dict[str, dict]:
    """The Belem summary, per-expression PA, filter ρ and knowledge-bias gaps, computed row by row."""
    # label ranking from all NV humans
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for r in nv.itertuples(index=False):
        if r.agent == "human" and not math.isnan(r.value):
            sums[r.label][0] += r.value
            sums[r.label][1] += 1
    label_mean = {u: s / n for u, (s, n) in sums.items()}

    def rhos(df: pd.DataFrame) -> dict[str, float]:
        answers: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for r in df.itertuples(index=False):
            if r.agent == "human" and not math.isnan(r.value) and r.label in label_mean:
                answers[r.respondent].append((r.value, label_mean[r.label]))
        out = {}
        for person, pairs in answers.items():
            xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
            if len(set(xs)) < 2 or len(set(ys)) < 2:
                out[person] = float("nan")
            else:
                out[person] = float(stats.spearmanr(xs, ys).statistic)
        return out

    rho_nv, rho_v = rhos(nv), rhos(v)
    keep = {p for p, r in list(rho_nv.items()) + list(rho_v.items()) if r > threshold}

    ref_counts: dict[str, Counter] = defaultdict(Counter)
    for r in nv.itertuples(index=False):
        if r.agent == "human" and r.respondent in keep and r.label != "control" and not math.isnan(r.value):
            ref_counts[r.label][_bin(r.value)] += 1
    reference = {u: {k: c / sum(cnt.values()) for k, c in cnt.items()} for u, cnt in ref_counts.items()}
    modes = {u: max(p.values()) for u, p in reference.items()}

    def score(df: pd.DataFrame) -> tuple[dict, dict]:
        hist: dict[tuple, dict[int, float]] = defaultdict(lambda: defaultdict(float))
        count: dict[tuple, float] = defaultdict(float)
        pairs: dict[tuple, dict[int, float]] = defaultdict(lambda: defaultdict(float))
        for r in df.itertuples(index=False):
            if r.label == "control":
                continue
            if r.agent == "human":
                if r.respondent in keep and not math.isnan(r.value):
                    pairs[(r.respondent, r.label)][_bin(r.value)] += 1
                continue
            key = (r.agent, r.label)
            if isinstance(r.dist, (list, tuple, np.ndarray)):
                total = sum(r.dist[:21])
                if total > 0:
                    for i in range(21):
                        hist[key][i * 5] += r.dist[i] / total
                    count[key] += 1
            elif not math.isnan(r.value):
                hist[key][_bin(r.value)] += 1
                count[key] += 1
        rows: dict[str, dict[str, float]] = {}
        per_u: dict[str, dict[str, float]] = defaultdict(dict)
        by_agent: dict[str, list[tuple]] = defaultdict(list)
        for (agent, u), h in hist.items():
            shares = {k: m / count[(agent, u)] for k, m in h.items()}
            pa = sum(p * reference[u].get(k, 0.0) for k, p in shares.items())
            by_agent[agent].append((pa * 100, pa / modes[u] * 100, abs(_mean_of(shares) - _mean_of(reference[u])),
                                    _w1(shares, reference[u])))
            per_u[agent][u] = pa * 100
        for agent, vals in by_agent.items():
            rows[agent] = {m: statistics.fmean(x[i] for x in vals) for i, m in enumerate(("pa", "pct_pa", "mae", "wasserstein"))}
        ind = []
        ind_u: dict[str, list[float]] = defaultdict(list)
        for (person, u), h in pairs.items():
            n = sum(h.values())
            shares = {k: c / n for k, c in h.items()}
            pa = sum(p * reference[u].get(k, 0.0) for k, p in shares.items())
            ind.append((pa * 100, abs(_mean_of(shares) - _mean_of(reference[u])), _w1(shares, reference[u])))
            ind_u[u].append(pa * 100)
        rows["Human Individual"] = {
            "pa": statistics.fmean(x[0] for x in ind),
            "pct_pa": statistics.fmean(statistics.fmean(v) / (modes[u] * 100) for u, v in ind_u.items()) * 100,
            "mae": statistics.fmean(x[1] for x in ind), "wasserstein": statistics.fmean(x[2] for x in ind)}
        per_u["Human Individual"] = {u: statistics.fmean(v) for u, v in ind_u.items()}
        uniform = {k: 1 / 21 for k in range(0, 101, 5)}
        rows["Random"] = {"pa": 100 / 21,
                          "pct_pa": statistics.fmean((1 / 21) / modes[u] for u in reference) * 100,
                          "mae": statistics.fmean(abs(50 - _mean_of(reference[u])) for u in reference),
                          "wasserstein": statistics.fmean(_w1(uniform, reference[u]) for u in reference)}
        rows["Human Mode"] = {"pa": statistics.fmean(modes.values()) * 100, "pct_pa": 100.0}
        return rows, per_u

    nv_rows, nv_per_u = score(nv)
    v_rows, v_per_u = score(v)

    # knowledge bias: paired for humans, Welch for models
    cells: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    model_vals: dict[tuple, list[float]] = defaultdict(list)
    for r in v.itertuples(index=False):
        if r.label == "control" or r.truth not in ("true", "false") or math.isnan(r.value):
            continue
        if r.agent == "human":
            if r.respondent in keep:
                cells[(r.respondent, r.label)][r.truth].append(r.value)
        else:
            model_vals[(r.agent, r.label, r.truth)].append(r.value)
            model_vals[(r.agent, "overall", r.truth)].append(r.value)
    gaps: dict[tuple, float] = {}
    d_by_u: dict[str, list[float]] = defaultdict(list)
    d_by_person: dict[str, list[float]] = defaultdict(list)
    for (person, u), t in cells.items():
        if t["true"] and t["false"]:
            d = statistics.fmean(t["true"]) - statistics.fmean(t["false"])
            d_by_u[u].append(d)
            d_by_person[person].append(d)
    for u, ds in list(d_by_u.items()) + [("overall", [statistics.fmean(x) for x in d_by_person.values()])]:
        half = stats.t.ppf(0.975, len(ds) - 1) * statistics.stdev(ds) / math.sqrt(len(ds))
        gaps[("human", u)] = (statistics.fmean(ds), statistics.fmean(ds) - half)
    for (agent, u, t), vals in model_vals.items():
        if t != "true" or (agent, u, "false") not in model_vals:
            continue
        a, b = vals, model_vals[(agent, u, "false")]
        va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
        dof = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
        gap = statistics.fmean(a) - statistics.fmean(b)
        gaps[(agent, u)] = (gap, gap - stats.t.ppf(0.975, dof) * math.sqrt(va + vb))
    return {"nv": nv_rows, "v": v_rows, "nv_per_u": dict(nv_per_u), "v_per_u": dict(v_per_u),
            "rho": rho_nv | rho_v, "gaps": gaps}


def compare(fast: BelemAnalysis, naive: dict[str, dict], tol: float = 1e-8) -> list[str]:
    """Differences between the vectorised and the row-by-row report (empty when they agree)."""
    problems = []

    def check(what: str, a: float, b: float) -> None:
        if not (math.isclose(a, b, rel_tol=tol, abs_tol=tol) or (math.isnan(a) and math.isnan(b))):
            problems.append(f"{what}: vectorised {a!r} vs row-by-row {b!r}")

    for which, scores in (("nv", fast.nv), ("v", fast.v)):
        for row, metrics in naive[which].items():
            for m, value in metrics.items():
                check(f"{which} {row} {m}", float(scores.summary.loc[row, m]), value)
        for agent, per_u in naive[f"{which}_per_u"].items():
            for u, value in per_u.items():
                check(f"{which} {agent} PA({u})", float(scores.pa_per_expression.loc[u, agent]), value)
    rho = pd.concat([fast.nv.filter["rho"], fast.v.filter["rho"]])
    for person, value in naive["rho"].items():
        check(f"rho {person}", float(rho.loc[person]), value)
    for (agent, u), (gap, low) in naive["gaps"].items():
        check(f"gap {agent} {u}", float(fast.knowledge_bias.loc[(agent, u), "gap"]), gap)
        check(f"gap CI {agent} {u}", float(fast.knowledge_bias.loc[(agent, u), "ci_low"]), low)
    return problems


# --- export (added by the export benchmark) -----------------------------------------------------------
def _export_rows(df: pd.DataFrame, limit: int | None = None):
    """The synthetic answers (or ``limit`` of them, evenly spread) as rows of the combined export
    (analysis/exports.py COLUMNS order)."""
    import json
    from datetime import datetime, timezone

    stamp = datetime(2024, 5, 1, tzinfo=timezone.utc)
    labels = {u: i + 1 for i, u in enumerate(EXPRESSIONS + ("control",))}
    data = df if limit is None or limit >= len(df) else df.iloc[:: max(1, len(df) // limit)].iloc[:limit]
    for respondent, agent, label, value, truth, dist in data[COLUMNS].itertuples(index=False, name=None):
        human = agent == "human"
        value = None if value != value else float(value)
        distribution = None
        if dist is not None:
            d = {str(5 * k): float(p) for k, p in enumerate(dist)}
            d["-1"] = max(0.0, 1.0 - sum(d.values()))
            distribution = json.dumps(d, separators=(",", ":"))
        yield ("bench", labels[label], f"{label}|{truth or 'nv'}", "speaker_belief", label, label == "control",
               None, truth or None, None, "en", "human" if human else "model", respondent,
               "completed" if human else None, agent, None if human else agent, None if human else "greedy",
               None if human else 1, None if human else 0, value, None, None, None,
               None if value is None else float(min(100, math.floor((value + 2.5) / 5) * 5)),
               distribution, None if value is None else f"{value:g}", "ok", 1500, True if human else None, stamp,
               "prolific" if human else None, None, None, 1, None)  # text, option_order, study_version, excluded_by


def _proc_status_mib(field: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _rss_growth(fn) -> tuple[float, float]:
    """(seconds, peak RSS growth in MiB) of ``fn()``; the peak is reset first through /proc/self/clear_refs."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
    start = _proc_status_mib("VmRSS")
    t0 = time.perf_counter()
    fn()
    seconds = time.perf_counter() - t0
    return seconds, _proc_status_mib("VmHWM") - start


def bench_export(df: pd.DataFrame) -> None:
    """Time and memory of the combined export's streaming writers (analysis/exports.py write_csv,
    write_parquet). The writers get rows from a fixed 20,000-row sample of the synthetic answers, repeated
    to 250,000 and to all rows, so the memory figures are the writers' own: they must not grow with the
    number of rows. Building the row tuples from the data frame is timed apart."""
    import itertools
    import tempfile

    from analysis.exports import CSV_CHUNK_ROWS, PARQUET_ROW_GROUP, write_csv, write_parquet

    total = len(df)
    t_rows, _ = _rss_growth(lambda: sum(1 for _ in _export_rows(df)))
    print(f"export: building {total:,} row tuples from the answers table: {t_rows:.1f} s")
    sample = list(_export_rows(df, 20_000))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for n in sorted({min(total, 250_000), total}):
            print(f"export of {n:,} rows:")
            for fmt, writer in (("CSV", write_csv), ("Parquet", write_parquet)):
                path = folder / f"export.{fmt.lower()}"
                rows = lambda: itertools.islice(itertools.cycle(sample), n)  # noqa: E731
                seconds, rss = _rss_growth(lambda: writer(rows(), path))
                tracemalloc.start()
                writer(rows(), path)
                traced = tracemalloc.get_traced_memory()[1] / 2 ** 20
                tracemalloc.stop()
                size = path.stat().st_size / 2 ** 20
                print(f"  {fmt:8s} {seconds:6.1f} s ({n / seconds:,.0f} rows/s), file {size:6.1f} MiB, "
                      f"peak RSS growth {rss:6.1f} MiB, peak traced Python memory {traced:5.1f} MiB")
    print(f"  (CSV written in chunks of {CSV_CHUNK_ROWS:,} rows, Parquet in row groups of {PARQUET_ROW_GROUP:,})")


# --- main -------------------------------------------------------------------------------------------------
def _timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def _peak(fn, *args) -> float:
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1] / 2 ** 20
    finally:
        tracemalloc.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=100_000, help="rows for the row-by-row comparison")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--naive-full", action="store_true", help="also time the row-by-row code on --rows")
    args = parser.parse_args(argv)

    (nv, v), t_gen = _timed(make_answers, args.rows, args.seed)
    n = len(nv) + len(v)
    humans = int((nv["agent"] == "human").sum() + (v["agent"] == "human").sum())
    print(f"data: {n:,} answers ({humans:,} human, {n - humans:,} model; "
          f"{int(nv['dist'].notna().sum() + v['dist'].notna().sum()):,} distribution-mode) generated in {t_gen:.1f} s")

    (belem, tang), t_fast = _timed(full_report, nv, v)
    peak = _peak(full_report, nv, v)
    print(f"full metric report on {n:,} answers: {t_fast:.2f} s, peak traced memory {peak:.0f} MiB "
          f"(tracemalloc), process max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(f"  {len(belem.summary)} summary rows, {int(belem.nv.filter['included'].sum())}/{len(belem.nv.filter)} NV and "
          f"{int(belem.v.filter['included'].sum())}/{len(belem.v.filter)} V participants kept, {len(tang)} Tang comparisons")

    (snv, sv) = make_answers(args.sample, args.seed + 1)
    m = len(snv) + len(sv)
    (fast_small, _), t_fast_small = _timed(full_report, snv, sv)
    _, t_fast_belem = _timed(analyse_belem, snv, sv)
    naive, t_naive = _timed(naive_report, snv, sv)
    problems = compare(fast_small, naive)
    if problems:
        print(f"row-by-row check on {m:,} answers: {len(problems)} DIFFERENCES, e.g.:")
        for p in problems[:10]:
            print("  ", p)
        raise SystemExit(1)
    print(f"row-by-row check on {m:,} answers: same numbers (summary, per-expression PA, every rho, every gap)")
    print(f"  row-by-row {t_naive:.2f} s vs vectorised {t_fast_belem:.2f} s (Belem part): "
          f"{t_naive / t_fast_belem:.0f}x faster")
    if args.naive_full:
        _, t_naive_full = _timed(naive_report, nv, v)
        _, t_fast_full = _timed(analyse_belem, nv, v)
        print(f"  on {n:,} answers: row-by-row {t_naive_full:.1f} s vs vectorised {t_fast_full:.2f} s: "
              f"{t_naive_full / t_fast_full:.0f}x faster")

    bench_export(pd.concat([nv, v], ignore_index=True))


if __name__ == "__main__":
    main()
