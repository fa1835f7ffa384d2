#!/usr/bin/env python
"""Measure every stop of every corpus case on the installed torch and write tests/corpus_stops.json.

    python scripts/measure_corpus_stops.py [--jobs 2] [--out tests/corpus_stops.json]
    python scripts/measure_corpus_stops.py --corpus tests/corpus_families --out tests/corpus_families/stops.json

Each case runs in a fresh interpreter (tests/oracle_runner.py, the same per-case run that tests/test_oracle.py
does): the first stop under ``torch.compile(fullgraph=True, backend="eager")``, then, when it raised, every
stop in order from one ``fullgraph=False`` run with Dynamo's graph-break log on (the method and its limits:
the runner's docstring).  The file is generated, never edited by hand; tests/test_oracle.py re-measures it and
fails when the installed torch disagrees, tests/test_corpus.py scores the analyzer against it.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
sys.path.insert(0, str(ROOT / "tests"))

from oracle_runner import run_fresh, stops_of  # noqa: E402

METHOD = ("tests/oracle_runner.py, one fresh process per case: fullgraph=True for the first stop; when it raised, "
          "one fullgraph=False run of f with Dynamo's graph_breaks log (verbose), every break at its innermost "
          "frame in the case's files, in order, re-encounters and breaks Dynamo marks as caused by an earlier "
          "graph break left out; frames of the case's files traced even without tensors")


def case_names(corpus: Path) -> list:
    """The cases of a corpus: those its expected.json lists (the shared corpus), else every cases/*.py."""
    expected = corpus / "expected.json"
    if expected.is_file():
        return sorted(json.loads(expected.read_text())["cases"])
    return sorted(p.stem for p in (corpus / "cases").glob("*.py"))


def measure(jobs: int = 2, names=None, corpus: Path = CORPUS) -> dict:
    names = sorted(names or case_names(corpus))
    cases = (corpus / "cases").resolve()
    with tempfile.TemporaryDirectory(prefix="corpus_stops_") as tmp, ThreadPoolExecutor(max_workers=jobs) as pool:
        results = dict(zip(names, pool.map(lambda n: run_fresh(cases, n, tmp), names)))
    crashed = {n: r["stderr"] for n, r in results.items() if r.get("crashed")}
    if crashed:
        raise SystemExit("crashed:\n" + "\n".join(f"{n}: {e}" for n, e in crashed.items()))
    return {"measured_on": {"torch": version("torch"), "python": platform.python_version()},
            "method": METHOD,
            "cases": {n: stops_of(r) for n, r in results.items()}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "corpus_stops.json")
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="a corpus folder (cases/ inside; default: "
                    "tests/corpus)")
    args = ap.parse_args(argv)
    doc = measure(args.jobs, corpus=args.corpus)
    args.out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    many = sum(len(c["stops"]) > 1 for c in doc["cases"].values())
    print(f"measure_corpus_stops: {len(doc['cases'])} cases, {sum(len(c['stops']) for c in doc['cases'].values())} "
          f"stops, {many} cases with more than one; written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
