"""Parallel parsing (--jobs) and the summary cache: same report whatever the number of jobs, warm runs parse
nothing, a corrupt entry is rebuilt, concurrent runs can share one cache directory."""
from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import compile_lint.parallel as parallel
from compile_lint.cache import SummaryCache
from compile_lint.engine import ScanOptions, SummaryLoader, scan
from compile_lint.parallel import imported_modules

COMPILE_LINT = str(Path(sys.executable).parent / "compile-lint")
N = 140  # > 2 chunks of parallel.CHUNK_FILES: the pool is really used with --jobs 2


def _tree(root: Path, n: int = N) -> Path:
    """gen/model.py compiles f -> gen.m0.step0 -> ... -> gen.m{n-1} -> subprocess; every module mentions
    `compile` (a region candidate: parsed ahead), a few are packages, one does not parse."""
    pkg = root / "gen"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("# compile\n")
    (pkg / "sub" / "__init__.py").write_text("from . import leaf  # compile\n")
    (pkg / "sub" / "leaf.py").write_text("import os\n\n\ndef leaf(x):\n    return os.getenv('A')  # compile\n")
    for i in range(n):
        nxt = f"from gen.m{i + 1} import step{i + 1}\n" if i + 1 < n else "import subprocess\n"
        call = f"step{i + 1}(x)" if i + 1 < n else "subprocess.check_output(['nvcc'])"
        pad = "".join(f"\n\ndef pad{j}(y):\n    return y + {j}\n" for j in range(8))
        (pkg / f"m{i}.py").write_text(f"# torch.compile helpers\n{nxt}from .sub import leaf\n\n\ndef step{i}(x):\n"
                                      f"    {call}\n    return x\n{pad}")
    (pkg / "broken.py").write_text("# compile\ndef f(:\n")
    (pkg / "model.py").write_text("import torch\nfrom gen.m0 import step0\nfrom gen.sub.leaf import leaf\n\n\n"
                                  "@torch.compile(fullgraph=True)\ndef f(x):\n    leaf(x)\n    return step0(x)\n")
    return pkg


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return _tree(tmp_path_factory.mktemp("par") / "src")


def _cli(pkg: Path, *args: str, cwd=None) -> subprocess.Popen:
    cmd = [COMPILE_LINT, "scan", str(pkg), "--no-environment", "-q", "--format", "json", *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)


def _json(p: subprocess.Popen) -> dict:
    out, err = p.communicate(timeout=120)
    assert p.returncode == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    return json.loads(out)


def test_same_json_whatever_the_number_of_jobs(tree, tmp_path):
    procs = [_cli(tree, "--jobs", "1", "--cache-dir", str(tmp_path / "c1")),
             _cli(tree, "--jobs", "2", "--cache-dir", str(tmp_path / "c2")),
             _cli(tree, "--jobs", "2", "--no-cache")]
    one, two, nocache = [_json(p) for p in procs]
    # the result cache's state, and why it missed, are the stats that depend on having a cache (absent with
    # --no-cache)
    assert one["stats"].pop("result_cache") == two["stats"].pop("result_cache") == "miss"
    assert one["stats"].pop("result_cache_miss") == two["stats"].pop("result_cache_miss") == (
        "no result of a scan with these options and this analyzer")
    assert "result_cache" not in nocache["stats"] and "result_cache_miss" not in nocache["stats"]
    assert one == two == nocache
    assert [f["callee"] for f in one["findings"] if f["severity"] == "error"] == ["subprocess.check_output"]
    assert one["stats"]["files_parsed"] == N + 5 and one["stats"]["files_skipped"] == 1
    assert [(Path(s["path"]).name, s["reason"][:12]) for s in one["skipped_files"]] == [("broken.py", "cannot parse")]


def test_the_pool_is_used_and_results_come_back(tree, monkeypatch):
    started = []
    real = parallel.ProcessPoolExecutor

    def spy(*a, **k):
        started.append(a[0] if a else k.get("max_workers"))
        return real(*a, **k)

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", spy)
    r = scan(ScanOptions(paths=[tree], use_environment=False, cache_dir=None, jobs=2))
    assert started == [2]
    assert r.stats["files_parsed"] == r.stats["modules_indexed"] == N + 5  # model, gen, sub, leaf + m*
    assert [f.callee for f in r.findings if f.severity == "error"] == ["subprocess.check_output"]


def test_warm_run_parses_nothing_and_corrupt_entry_is_rebuilt(tree, tmp_path):
    cache = tmp_path / "cache"
    opts = dict(paths=[tree], use_environment=False, cache_dir=cache, jobs=2)
    cold = scan(ScanOptions(**opts))
    entries = sorted(cache.rglob("*.pkl"))
    assert cold.stats["files_parsed"] == len(entries) >= N
    warm = scan(ScanOptions(**opts))
    assert warm.stats["files_parsed"] == 0 and warm.stats["cache_hits"] == warm.stats["modules_indexed"]
    assert [f.fingerprint() for f in warm.findings] == [f.fingerprint() for f in cold.findings]
    entries[3].write_bytes(b"\x80\x05garbage")
    entries[7].write_bytes(b"")
    again = scan(ScanOptions(**opts))
    assert again.stats["files_parsed"] == 2
    assert sum("corrupt cache entry" in why for _, why in again.problems) == 2
    assert [f.fingerprint() for f in again.findings] == [f.fingerprint() for f in cold.findings]
    assert scan(ScanOptions(**opts)).stats["files_parsed"] == 0  # rebuilt, and trusted again
    # an edited file is parsed again, and only that one
    m5 = tree / "m5.py"
    old = m5.read_text()
    try:
        m5.write_text(old + "\n\ndef extra():\n    return 1\n")
        edited = scan(ScanOptions(**opts))
        assert edited.stats["files_parsed"] == 1
    finally:
        m5.write_text(old)


def test_concurrent_runs_share_one_cache_dir(tree, tmp_path):
    cache = tmp_path / "shared"
    procs = [_cli(tree, "--jobs", "2", "--cache-dir", str(cache)) for _ in range(3)]
    docs = [_json(p) for p in procs]
    assert all(d["findings"] == docs[0]["findings"] for d in docs)
    assert not [q for q in cache.rglob("*") if q.name.startswith(".tmp")]
    for e in cache.rglob("*.pkl"):
        with open(e, "rb") as fh:
            pickle.load(fh)
    assert _json(_cli(tree, "--jobs", "2", "--cache-dir", str(cache)))["stats"]["files_parsed"] == 0


def test_torch_inside_a_scanned_site_packages_is_not_scanned(tmp_path):
    site = tmp_path / "site-packages"
    (site / "torch" / "_inductor").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("def compile(model=None, **kw):\n    return model\n")
    (site / "torch" / "_inductor" / "__init__.py").write_text(
        "import torch\n\n\n@torch.compile\ndef internal(x):\n    open('/tmp/x')\n")
    (site / "app.py").write_text("import subprocess\nimport torch\n\n\n@torch.compile(fullgraph=True)\n"
                                 "def f(x):\n    subprocess.run(['ls'])\n    return x\n")
    r = scan(ScanOptions(paths=[site], use_environment=False, cache_dir=None, jobs=1))
    assert r.stats["files_opaque"] == 2 and r.stats["files_discovered"] == 1
    assert [(reg.qualname, reg.kind) for reg in r.regions] == [("f", "@torch.compile")]
    assert [f.callee for f in r.findings if f.severity == "error"] == ["subprocess.run"]


def test_preloaded_summary_is_used_only_for_the_same_content(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def a():\n    pass\n")
    cache = SummaryCache(None)
    ahead = parallel.index_files(None, [("m", str(f), False)])[0]
    loader = SummaryLoader(cache)
    loader.ahead = parallel.Indexed({p: (k, s) for p, k, s in ahead})
    assert "a" in loader("m", f, False).functions and loader.parsed == 0  # counted by the pass itself
    loader.ahead = parallel.Indexed({p: (k, s) for p, k, s in ahead})
    f.write_text("def b():\n    pass\n")  # changed since it was indexed ahead
    assert set(loader("m", f, False).functions) == {"<module>", "b"} and loader.parsed == 1


def test_imported_modules():
    src = (b"import os, a.b as c\nfrom . import x\nfrom ..p import (q,\n    r as s)\nfrom .m import *\n"
           b"    from z import w  # indented\nx = 'import nothing'\n")
    got = imported_modules(src, "pkg.sub.mod", False)
    assert got == ["os", "a.b", "pkg.sub", "pkg.sub.x", "pkg.p", "pkg.p.q", "pkg.p.r", "pkg.sub.m", "z", "z.w"]
    assert imported_modules(b"from . import y\n", "pkg", True) == ["pkg", "pkg.y"]
    assert imported_modules(b"from .... import y\n", "a.b", False) == []


def test_default_jobs_is_the_cores_we_may_use():
    assert parallel.default_jobs() == len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else True


_real_index_pickled = parallel._index_pickled


def _slow_index_pickled(cache_dir, items):  # module level: the pool's workers look it up by name
    import time

    time.sleep(0.2)
    return _real_index_pickled(cache_dir, items)


def test_background_indexer_hands_each_file_over_once(tmp_path, monkeypatch):
    """Files taken before the pool reaches them are indexed by the caller, the rest by the pool; every file of
    the set is indexed exactly once (so the counts do not depend on timing), and ``finish`` waits for all."""
    monkeypatch.setattr(parallel, "CHUNK_FILES", 2)
    monkeypatch.setattr(parallel, "_index_pickled", _slow_index_pickled)  # 20 chunks: 2 s on 2 workers
    items = []
    for i in range(40):
        p = tmp_path / f"m{i}.py"
        p.write_text(f"def f{i}():\n    return {i}\n")
        items.append((f"m{i}", str(p), False))
    cache = SummaryCache(tmp_path / "cache")
    ahead = parallel.index_in_parallel(items, cache, jobs=2)
    assert isinstance(ahead, parallel.BackgroundIndexer)
    last = ahead.take(items[-1][1])  # far down the queue: taken out, for the caller to index
    assert last == parallel.YOURS
    first = ahead.take(items[0][1])  # in the first chunk sent: waited for
    assert first is not None and "f0" in pickle.loads(first[1]).functions
    ahead.add(parallel._chunks([(f"n{i}", str(tmp_path / f"n{i}.py"), False) for i in range(2)], {}))
    for i in range(2):
        (tmp_path / f"n{i}.py").write_text("x = 1\n")
    assert ahead.finish() == 42  # each file once: 39 by the pool, 1 taken out by the caller, 2 added
    assert ahead.take(items[0][1]) is None  # handed over once
    assert ahead.take(str(tmp_path / "elsewhere.py")) is None
    summary = ahead.take(items[1][1])
    assert summary is not None and "f1" in pickle.loads(summary[1]).functions
    got = {p for _, p, _ in items[2:-1] if ahead.take(p) is not None}
    assert got == {p for _, p, _ in items[2:-1]}
    assert len(list((tmp_path / "cache").rglob("*.pkl"))) == 41  # the caller's own is not the pool's to write


def test_background_indexer_stops_on_close(tmp_path):
    items = []
    for i in range(400):
        p = tmp_path / f"m{i}.py"
        p.write_text("x = 1\n" * 200)
        items.append((f"m{i}", str(p), False))
    ahead = parallel.index_in_parallel(items, SummaryCache(None), jobs=2)
    ahead.close()
    # the workers are gone when close() returns: the CLI then leaves with os._exit, and workers it had not
    # told to stop waited on their queue forever (found by interrupting a whole site-packages scan)
    assert not multiprocessing.active_children()
    ahead._feeder.join(timeout=30)
    assert not ahead._feeder.is_alive()
    assert ahead.take(items[-1][1]) is None


def test_progress_reports_files_parsed_regions_and_findings(tree):
    import io

    from compile_lint.progress import Progress

    events = []
    r = scan(ScanOptions(paths=[tree], use_environment=False, cache_dir=None, jobs=2,
                         progress=lambda ev, **info: events.append((ev, info))))
    last = [info for ev, info in events if ev == "scan"][-1]
    assert last["done"] == last["total"] > 100
    # the pool may still be on its last chunks (finish() waits for them after the walk)
    assert 0 < last["parsed"] <= r.stats["files_parsed"] and last["regions"] == r.stats["regions"] == 1
    assert last["findings"] >= 1
    out = io.StringIO()
    bar = Progress(out)
    bar("scan", **last)
    assert f"{last['total']}/{last['total']} files, parsed {last['parsed']}, regions 1" in out.getvalue()


def test_prefetch_puts_a_likely_region_files_imports_right_after_it(tmp_path):
    """The order of need: each candidate, then (only for those ``follow`` picks) its imports, ``depth``
    deep; a candidate imported earlier is not queued twice; nothing else is read ahead."""
    from compile_lint.program import ModuleLocator

    files = {
        "a.py": "import b\n# compiled\n",  # a candidate, not followed: b is not read ahead for it
        "r.py": "import b, c\n# torch.compile\n",  # followed
        "b.py": "import d\n",
        "c.py": "import e\n",
        "d.py": "import deep\n",  # level 2: its own imports are not followed
        "deep.py": "",
        "e.py": "",
        "s.py": "import e\n# torch.compile\n",  # followed, but e is queued already
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    scanned = {n[:-3]: (tmp_path / n, False) for n in files}
    locator = ModuleLocator(scanned, [str(tmp_path)])
    cands = [(m, tmp_path / f"{m}.py", False) for m in ("a", "r", "s")]
    ahead = parallel.prefetch(cands, locator, SummaryCache(None), jobs=1, depth=2,  # d.py: the last level
                              follow=lambda module, data: b"torch.compile" in data)
    assert list(ahead.summaries) == [str(tmp_path / f"{m}.py") for m in ("a", "r", "b", "c", "d", "e", "s")]


def test_progress_off_a_terminal_is_one_plain_line_per_interval(tree):
    """A CI log gets a line every ~10 s (phase, files, regions), no escape codes; a short scan none."""
    import io

    from compile_lint.progress import Progress

    out = io.StringIO()  # not a terminal
    log = Progress.for_stream(out)
    assert not log.live
    log("scan", done=1, total=10, parsed=1, regions=0)
    assert out.getvalue() == ""  # before the first interval
    fast = Progress(io.StringIO(), live=False, interval=0.0)
    scan(ScanOptions(paths=[tree], use_environment=False, cache_dir=None, jobs=1, progress=fast))
    lines = fast.stream.getvalue().splitlines()
    assert lines and all(ln.startswith("compile-lint: ") and "\x1b" not in ln for ln in lines)
    assert any(ln.startswith("compile-lint: scanning ") and " files" in ln and "regions " in ln for ln in lines)


@pytest.mark.parametrize("text,likely", [
    (b"from torch import compile\n", True),
    (b"from torch import  compile as c\n", True),
    (b"x = 1\nimport\tcompile\n", True),
    (b"(import compile", True),
    (b"import compiled\n", False),  # a longer name
    (b"ximport compile\n", False),  # `import` inside an identifier
    (b"_import compile\n", False),
    (b"9import compile\n", False),
    (b"model.compile()\n", True),
    (b"model.compile( \t)\n", True),
    (b"model.compile(mode='max')\n", False),  # a call with arguments: `re.compile(p)`'s shape
    (b"pattern = re.compile(r'x')\n", False),
    (b"torch.compile\n", True),
    (b"import torch._dynamo\n", True),
    (b"compiled = 1\n", False),
])
def test_a_likely_region_file_is_told_apart_as_one_regex_would(text, likely):
    """engine._likely_region_file: ``model.compile()`` or ``import compile`` (a word boundary before
    ``import``) beside the words; tested one pattern at a time (each with a literal start), it answers as the
    alternation of both did."""
    import re

    from compile_lint.engine import _likely_region_file

    tell = _likely_region_file(ScanOptions(paths=[]), ())
    reference = re.compile(rb"\bimport[ \t]+compile\b|\.compile\([ \t]*\)")
    words = (b"torch.compile", b"torch._dynamo")
    assert tell(text) is likely
    assert likely == (any(w in text for w in words) or reference.search(text) is not None)
