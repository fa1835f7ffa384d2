"""Reliability on real code: every .py file of sglang 0.5.23, flashinfer 0.7.2.post1, vllm 0.33.0 (from PyPI,
cached) and the installed torch package goes through the real pipeline, and no exception escapes.

For each tree:

1. every file is indexed by the engine's own ``SummaryLoader`` (read -> ``decode_source`` -> ``index_source``
   -> on-disk ``SummaryCache``) in a process pool, and each summary round-trips through pickle unchanged;
2. a ``Program`` is built over the tree and every module's top-level bindings are resolved
   (``Program.resolve_global``), from the cache the pool filled;
3. sglang + flashinfer get a full ``scan()`` with region finding and the reach walk (``--stats`` numbers).

Files that cannot be parsed (Python 2, templates, bad encodings) are not errors: they are skipped with a
one-line reason, counted, and listed.  Anything else that escapes is an internal error and fails the test.

This test is heavy (~13,500 files, 6.5 minutes of the 2-core CI machine): it runs only when selected,
``pytest -m realworld tests/test_reliability.py`` or ``COMPILE_LINT_RELIABILITY=1``, which ``python
bench/reliability.py`` sets.  CI (``COMPILE_LINT_REALWORLD=1``) leaves it to the bench, to stay under 30 minutes.
"""
from __future__ import annotations

import os
import pickle
import sys
import sysconfig
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

pytestmark = pytest.mark.realworld

TIME_BUDGET_S = 240  # the "< 4 minutes"; reported, asserted only with COMPILE_LINT_RELIABILITY_STRICT=1


def _selected(config) -> bool:
    """Selected with ``-m realworld``, or by the environment: COMPILE_LINT_RELIABILITY=1 (bench/reliability.py)."""
    expr = config.getoption("markexpr") or ""
    return os.environ.get("COMPILE_LINT_RELIABILITY") == "1" or ("realworld" in expr and "not realworld" not in expr)


# ------------------------------------------------------------------------------------------- the trees
def _trees() -> dict:
    """name -> (scanned path, how its modules are named).  Skips (with the reason) when a source is missing."""
    from realworld.pypi_fixtures import FixtureUnavailable, fetch, site_root

    out = {}
    try:
        out["sglang+flashinfer"] = site_root("current")  # sglang 0.5.23 + flashinfer 0.7.2.post1
        out["vllm"] = fetch("vllm", "0.33.0")
    except FixtureUnavailable as e:
        pytest.skip(f"real-world sources unavailable: {e}")
    torch_dir = Path(sysconfig.get_paths()["purelib"]) / "torch"
    if (torch_dir / "__init__.py").is_file():
        out["torch"] = torch_dir
    return out


# ------------------------------------------------------------------------------------------- pool workers
def _index_chunk(cache_dir: str, items: list) -> list:
    """Index files with the engine's loader; return (path, status, detail) per file.

    status: ``ok`` | ``skipped`` (the file could not be parsed: detail is the one-line reason) | ``crash``
    (an exception escaped, or the summary does not survive pickle: detail is the traceback)."""
    from compile_lint.cache import SummaryCache
    from compile_lint.engine import SummaryLoader

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    loader = SummaryLoader(SummaryCache(Path(cache_dir)))
    out = []
    for module, path, is_package in items:
        try:
            s = loader(module, Path(path), is_package)
            back = pickle.loads(pickle.dumps(s, protocol=pickle.HIGHEST_PROTOCOL))
            if back != s:
                raise AssertionError("summary changed through a pickle round trip")
            if s.error:
                out.append((path, "skipped", s.error))
            else:
                out.append((path, "ok", None))
        except BaseException:  # noqa: BLE001 - the point is that nothing escapes
            out.append((path, "crash", traceback.format_exc(limit=8)))
    return out


def _resolve_tree(name: str, root: str, cache_dir: str) -> dict:
    """Build a Program over one tree and resolve every module's top-level bindings."""
    from compile_lint.cache import SummaryCache
    from compile_lint.discover import discover
    from compile_lint.engine import SummaryLoader
    from compile_lint.program import ModuleLocator, Program

    t0 = time.monotonic()
    disc = discover([Path(root)])
    scanned = {f.module: (f.path, f.is_package) for f in disc.files}
    # only the tree itself: torch's import root is the whole site-packages, and other packages are not the input
    locator = ModuleLocator(scanned, [])
    loader = SummaryLoader(SummaryCache(Path(cache_dir)))
    program = Program(locator, loader, scanned_modules=scanned.keys())
    crashes, bindings = [], 0
    for f in disc.files:
        try:
            m = program.module(f.module)
            if m is None:
                continue
            for b in list(m.bindings):
                bindings += 1
                program.resolve_global(f.module, b)
        except BaseException:  # noqa: BLE001
            crashes.append((str(f.path), traceback.format_exc(limit=8)))
    return {"tree": name, "modules": len(disc.files), "bindings": bindings, "crashes": crashes,
            "cache_hits": loader.cache.hits, "reparsed": loader.parsed, "seconds": time.monotonic() - t0}


def _scan_tree(root: str, cache_dir: str) -> dict:
    """A full scan (regions + reach walk) of a site root; report its stats and problems."""
    from compile_lint.engine import ScanOptions, scan

    t0 = time.monotonic()
    try:
        opts = dict(paths=[Path(root)], use_environment=False, cache_dir=Path(cache_dir), jobs=1)
        r = scan(ScanOptions(**{k: v for k, v in opts.items() if k in ScanOptions.__dataclass_fields__}))
    except BaseException:  # noqa: BLE001
        return {"crash": traceback.format_exc(limit=12), "seconds": time.monotonic() - t0}
    return {"crash": None, "stats": dict(r.stats), "problems": list(r.problems), "findings": len(r.findings),
            "seconds": time.monotonic() - t0}


def _chunks(items: list, n: int) -> list:
    return [items[i:i + n] for i in range(0, len(items), n)]


# ------------------------------------------------------------------------------------------- the test
def test_every_real_file_goes_through_the_pipeline(request, tmp_path):
    if not _selected(request.config):
        pytest.skip("heavy (~13,500 real files): run with `pytest -m realworld tests/test_reliability.py`")
    from compile_lint.discover import discover

    t0 = time.monotonic()
    trees = _trees()
    cache_dir = str(tmp_path / "cache")
    items, per_tree = [], {}
    for name, root in trees.items():
        disc = discover([root])
        assert not disc.problems, disc.problems[:5]
        per_tree[name] = len(disc.files)
        items += [(f.module, str(f.path), f.is_package) for f in disc.files]
    # large files first, so the pool does not end on one long straggler
    items.sort(key=lambda it: -os.path.getsize(it[1]))
    workers = max(2, os.cpu_count() or 2)
    results = []
    with ProcessPoolExecutor(workers) as pool:
        # the full scan is the longest task (its walk is one process): it starts first, on one worker, and
        # shares the summary cache with the indexing chunks running beside it (concurrent use of one cache)
        scan_f = pool.submit(_scan_tree, str(trees["sglang+flashinfer"]), cache_dir)
        for part in pool.map(_index_chunk, [cache_dir] * ((len(items) + 39) // 40), _chunks(items, 40)):
            results += part
        t_index = time.monotonic() - t0
        resolve_fs = [pool.submit(_resolve_tree, name, str(root), cache_dir) for name, root in trees.items()]
        resolved = [f.result() for f in resolve_fs]
        scanned = scan_f.result()
    elapsed = time.monotonic() - t0

    crashes = [(p, d) for p, s, d in results if s == "crash"]
    skipped = [(p, d) for p, s, d in results if s == "skipped"]
    lines = [f"reliability: {len(results)} files ({', '.join(f'{k} {v}' for k, v in per_tree.items())}); "
             f"indexed in {t_index:.0f}s with {workers} workers; total {elapsed:.0f}s; "
             f"{len(skipped)} skipped, {len(crashes)} internal errors"]
    lines += [f"  skipped {p}: {why}" for p, why in skipped]
    lines += [f"  {r['tree']}: {r['modules']} modules, {r['bindings']} top-level bindings resolved in "
              f"{r['seconds']:.0f}s ({r['reparsed']} re-parsed, {r['cache_hits']} from the cache), "
              f"{len(r['crashes'])} internal errors" for r in resolved]
    if scanned.get("stats"):
        st = scanned["stats"]
        lines.append(f"  scan sglang+flashinfer: {st['files_discovered']} files, {st['regions']} regions, "
                     f"{st['functions_walked']} functions walked, {scanned['findings']} findings, "
                     f"files_skipped={st['files_skipped']}, {len(scanned['problems'])} problems, "
                     f"{scanned['seconds']:.0f}s")
    report = "\n".join(lines) + "\n"
    if sys.__stderr__ is not None:
        sys.__stderr__.write("\n" + report)
    if os.environ.get("COMPILE_LINT_RELIABILITY_REPORT"):
        Path(os.environ["COMPILE_LINT_RELIABILITY_REPORT"]).write_text(report)
    assert not crashes, f"{len(crashes)} internal error(s) while indexing; first: {crashes[0][0]}\n{crashes[0][1]}"
    for r in resolved:
        assert not r["crashes"], (f"{r['tree']}: {len(r['crashes'])} internal error(s) resolving bindings; first: "
                                  f"{r['crashes'][0][0]}\n{r['crashes'][0][1]}")
    assert scanned["crash"] is None, f"scan of sglang+flashinfer raised:\n{scanned['crash']}"
    st = scanned["stats"]
    assert st["files_discovered"] == per_tree["sglang+flashinfer"]
    assert st["regions"] > 0
    # every problem the scan reports is one line with a reason
    for path, why in scanned["problems"]:
        assert why and "\n" not in why, (path, why)
    # skipped files are few and each has its one-line reason
    assert len(skipped) <= 0.01 * len(results), skipped[:10]
    for p, why in skipped:
        assert why and "\n" not in why, (p, why)
    if os.environ.get("COMPILE_LINT_RELIABILITY_STRICT") == "1":
        assert elapsed < TIME_BUDGET_S, f"took {elapsed:.0f}s (budget {TIME_BUDGET_S}s)"
