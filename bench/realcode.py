"""The real-code suite: compile-lint against Dynamo and the executed call graph of real models (issue [A]).

    python bench/realcode.py                   # every model: the table, the totals, the misses
    python bench/realcode.py --cases llama,t5  # some
    python bench/realcode.py --measure         # re-measure the truth first (fresh processes; ~30 min on 2 cores)
    python bench/realcode.py --record-baseline # store the CI sample's figures (tests/realcode/baseline.json)

The truth (``tests/realcode/truth/*.json``) is what Dynamo did with each model and variant on the pinned
PyPI releases (``tests/realcode/requirements.lock``), measured by ``tests/realcode/harness.py``; the static
side is one compile-lint scan with each model's ``forward`` as an entry point (``tests/realcode/static.py``);
``tests/realcode/compare.py`` says what each figure means.  Targets (issue [A], with [B]-[D]): error
precision >= 95 %, stop recall >= 95 %, reach recall >= 98 %.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from realcode import compare, truth  # noqa: E402
from realcode.catalog import BY_NAME, CASES, names_from  # noqa: E402
from realcode.env import EnvUnavailable, cache_root, env_root  # noqa: E402

TARGETS = {"error precision": 0.95, "stop recall": 0.95, "reach recall": 0.98}
BASELINE = REPO / "tests" / "realcode" / "baseline.json"


def lint_cache() -> Path:
    return cache_root() / "realcode" / "lint-cache"


def run(names: list, measure: bool = False, jobs: int = 2, cache_dir: Path | None = None) -> tuple:
    if measure:
        truth.main(["--cases", ",".join(names), "--jobs", str(jobs)])
    stored = truth.load()
    cases = [BY_NAME[n] for n in names if n in stored]
    from realcode.static import analyse

    t0 = time.perf_counter()
    static = analyse(cases, env_root(), cache_dir=cache_dir or lint_cache())
    seconds = time.perf_counter() - t0
    scores = [compare.score_case(c, stored[c.name], static[c.name]) for c in cases]
    missing = [n for n in names if n not in stored]
    return scores, static["_stats"], seconds, stored["_meta"], missing


def figures(scores: list) -> dict:
    t = compare.totals(scores)
    return {"models": t.models, "errors": t.errors, "true_errors": t.true_errors, "stops": t.stops,
            "stop_hits": t.stop_hits, "warnings": t.warnings, "traced": t.traced,
            "reached_traced": t.reached_traced, "over_reach": t.over_reach}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="", help="comma-separated model names (default: all)")
    ap.add_argument("--measure", action="store_true", help="re-measure the truth before comparing")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--misses", type=int, default=8, help="reach misses listed per model")
    ap.add_argument("--record-baseline", action="store_true",
                    help="write the CI sample's figures to tests/realcode/baseline.json")
    ap.add_argument("--json", help="also write the scores as JSON to this file")
    ap.add_argument("--cache-dir", type=Path, help="compile-lint's cache (default: beside the environment)")
    a = ap.parse_args(argv)
    names, unknown = names_from(a.cases)
    if unknown:
        print(f"unknown models: {unknown}", file=sys.stderr)
        return 2
    if a.record_baseline:
        names = [c.name for c in CASES if c.fast]
    try:
        scores, stats, seconds, meta, missing = run(names, a.measure, a.jobs, a.cache_dir)
    except EnvUnavailable as e:
        print(f"realcode: {e}", file=sys.stderr)
        return 2
    print(f"truth: torch {meta.get('torch')}, {meta.get('environment')}, measured {meta.get('measured')}")
    print(f"static: one scan, {len(scores)} entry points, {seconds:.1f} s, "
          f"{stats.get('functions_walked')} functions walked, unresolved calls {stats.get('unresolved_ratio')}, "
          f"cycle rounds {stats.get('cycle_rounds')}, cycles unsettled {stats.get('cycles_unsettled')}")
    print()
    print(compare.table(scores))
    print()
    print(compare.details(scores, a.misses))
    for n in missing:
        print(f"{n}: no stored truth (run with --measure)")
    t = compare.totals(scores)
    got = {"error precision": t.error_precision, "stop recall": t.stop_recall, "reach recall": t.reach_recall}
    print()
    for k, target in TARGETS.items():
        if k == "error precision" and not t.errors:  # nothing to be right or wrong about: not a pass
            print(f"{k:<16}    n/a   target {target:.0%}   no error findings to score")
            continue
        print(f"{k:<16} {got[k]:6.1%}   target {target:.0%}   {'met' if got[k] >= target else 'NOT met'}")
    if a.json:
        Path(a.json).write_text(json.dumps({"figures": figures(scores), "scores": [s.__dict__ | {
            "stops": [st.__dict__ for st in s.stops]} for s in scores]}, indent=1, default=str))
    if a.record_baseline:
        BASELINE.write_text(json.dumps({"cases": names, "figures": figures(scores)}, indent=1) + "\n")
        print(f"wrote {BASELINE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
