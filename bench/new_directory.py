"""Benchmark: a scan in a new working directory of code whose environment was scanned before (issue "A scan a
new user can trust": caches where they belong, lint/cachedirs.py).

    python bench/new_directory.py            # prints the rows; exit 1 when a target is missed

A small project (a script compiling a function that calls flashinfer's ``fp4_quantize``, the seed bug) with
sglang 0.5.9 + flashinfer 0.6.3 from PyPI on ``--search-path`` (tests/realworld/pypi_fixtures.py), and a fresh
user cache directory (``COMPILE_LINT_CACHE_DIR``):

1. ``first directory``: the first scan, in checkout one: the trace rules are dumped, the library files indexed.
2. ``same directory``: again, unchanged (the project's result cache).
3. ``new directory``: the same project in a new checkout two: its own results are new, the environment's
   caches (trace rules, library summaries) are reused.  Target: < 2 s, and ``git status`` clean in both.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.realworld.pypi_fixtures import site_root  # noqa: E402

TARGET_S = 2.0
APP = """import torch
from flashinfer.fp4_quantization import fp4_quantize


@torch.compile(fullgraph=True)
def quantize(x, scale):
    return fp4_quantize(x, scale)
"""


def git(*args, cwd):
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b")
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, env=env).stdout


def checkout(d: Path) -> Path:
    d.mkdir(parents=True)
    (d / "app.py").write_text(APP)
    git("init", "-q", cwd=d)
    git("add", "app.py", cwd=d)
    git("commit", "-qm", "app", cwd=d)
    return d


def run(cwd: Path, site: Path, user_cache: Path) -> dict:
    exe = shutil.which("compile-lint") or str(Path(sys.executable).parent / "compile-lint")
    t = time.perf_counter()
    p = subprocess.run([exe, "scan", "app.py", "--search-path", str(site), "--format", "json", "-q"], cwd=cwd,
                       capture_output=True, text=True, env=dict(os.environ, COMPILE_LINT_CACHE_DIR=str(user_cache)))
    wall = time.perf_counter() - t
    if p.returncode not in (0, 1):
        raise SystemExit(f"scan failed ({p.returncode}): {p.stderr.strip()}")
    doc = json.loads(p.stdout)
    return {"wall": wall, "findings": len(doc["findings"]), "parsed": doc["stats"]["files_parsed"],
            "hits": doc["stats"]["cache_hits"], "result": doc["stats"].get("result_cache", "-"),
            "rules": "cached" if "cached" in doc["trace_rules"] else "dumped",
            "clean": git("status", "--porcelain", cwd=cwd) == ""}


def main() -> int:
    site = site_root("seed")
    work = Path(tempfile.mkdtemp(prefix="cl-bench-newdir-"))
    try:
        user = work / "user-cache"
        one, two = checkout(work / "one"), checkout(work / "two")
        rows = [("first directory", run(one, site, user)), ("same directory", run(one, site, user)),
                ("new directory", run(two, site, user))]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'run':<16} {'wall s':>7} {'parsed':>7} {'cache hits':>10} {'findings':>8}  result  trace rules  "
          f"git status")
    for name, r in rows:
        print(f"{name:<16} {r['wall']:>7.2f} {r['parsed']:>7} {r['hits']:>10} {r['findings']:>8}  {r['result']:<6}  "
              f"{r['rules']:<11}  {'clean' if r['clean'] else 'DIRTY'}")
    new = rows[2][1]
    ok = new["wall"] < TARGET_S and all(r["clean"] for _, r in rows) and len({r["findings"] for _, r in rows}) == 1
    print(f"new directory: {new['wall']:.2f} s (target < {TARGET_S:.0f} s): {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
