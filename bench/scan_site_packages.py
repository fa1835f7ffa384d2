"""Benchmark: `compile-lint scan site-packages/` cold, warm and after a one-file edit (GitHub issue "Scale").

    python bench/scan_site_packages.py                 # everything (torch + sglang + flashinfer + vllm)
    python bench/scan_site_packages.py --only sglang,flashinfer-python --jobs 2

1. Builds once (cached under ``$COMPILE_LINT_BENCH_DIR`` or ``~/.cache/compile-lint/bench``) a venv-like
   ``site-packages/``: torch 2.13 (the CPU wheel in /opt/wheels, else ``pip download``), sglang 0.5.23,
   flashinfer-python 0.7.2.post1, vllm 0.33.0 (``pip download --no-deps`` + unzip, through
   ``tests/realworld/pypi_fixtures.py``).  Only ``.py`` files and ``*.dist-info/`` are copied (compile-lint
   reads nothing else; the shared libraries would only cost disk), as real copies: the bench edits one file.
2. Runs ``compile-lint scan SITE --no-environment --format json --stats`` in subprocesses:
   cold (empty cache), warm (no change), one file edited (a comment appended to a region file: target
   applies), the same file edited in code (a function added: the summary changes, every region is walked
   again; reported, no target), both restored after, and ``--no-cache``; for each: wall time, CPU time (the process and its workers), peak RSS (the
   largest process), files parsed, cache hits.
3. Baseline, measured in the same run on the same number of workers: libcst parsing every file the scan
   discovered.  If that would take longer than ``--baseline-budget`` seconds, a deterministic sample (every
   k-th file) is parsed and the time extrapolated by bytes; the output says so.
4. Checks: no internal error, the same findings (fingerprints) in every run and the ``--no-cache`` run, and
   the targets (cold <= 60 s, warm <= 3 s, one-file edit <= 5 s, peak RSS <= 2 GB); a missed target is
   printed with its factor, and the exit code is 1.
5. Incremental rows (issue [F]), each on the warm cache, then undone: a code edit (an environment read put in
   front of a one-line statement: no line moves) in ``--leaf-edits`` functions that hold a hazard one region
   reaches, in distinct files (the median is the figure); the same edit in the function of FlashInfer's
   ``jit/core.py`` on the paths of the most regions (the hub); a ``@torch.compile`` function appended to
   ``sglang/srt/layers/activation.py`` (a new region); and ``compile-lint precommit`` on a checkout of
   sglang's source (flashinfer on ``--search-path``) after a leaf edit.  Each row states the regions walked
   again and reused and the files re-indexed, and is checked against a full scan of the edited tree (every
   region walked, from the same cached summaries; the pre-commit row against ``--no-cache``), unless
   ``--no-verify``.  The tree with every edit undone must give the original findings again.  ``--daemon``:
   the same rows again through ``compile-lint daemon`` (``scan --daemon``; the client's wall time, and how long
   after answering the daemon had written the state), each checked against its row in a process of its own,
   after a scan of the unchanged tree through it (a hit: the daemon then reads the state for the next edit);
   the pre-commit row's edit too (``precommit --daemon``, a daemon of its own, primed the same way).
6. The parse floor: the stdlib ``ast`` reading and parsing every .py file of the site on the same number of
   workers; the incremental rows are printed as ratios to it.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.realworld.pypi_fixtures import fetch  # noqa: E402

TORCH_WHEEL = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
DISTS = [("torch", "2.13.0"), ("sglang", "0.5.23"), ("flashinfer-python", "0.7.2.post1"), ("vllm", "0.33.0")]
TARGETS = {"cold": 60.0, "warm": 3.0, "edit": 5.0}
RSS_TARGET_MB = 2048
EDIT_FILE = "sglang/srt/layers/activation.py"  # a region candidate (mentions torch.compile); else the first one
HUB_FILE = "flashinfer/jit/core.py"  # the JIT loader most of FlashInfer's ops go through


def bench_root() -> Path:
    env = os.environ.get("COMPILE_LINT_BENCH_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "compile-lint" / "bench"


def _unpacked(dist: str, version: str) -> Path:
    if dist == "torch" and TORCH_WHEEL.is_file():
        out = bench_root() / f"torch-{version}+cpu"
        if not (out / ".complete").is_file():
            tmp = Path(tempfile.mkdtemp(prefix=".tmp-torch-", dir=bench_root()))
            with zipfile.ZipFile(TORCH_WHEEL) as zf:
                for n in zf.namelist():
                    if n.endswith(".py") or ".dist-info/" in n:
                        zf.extract(n, tmp)
            (tmp / ".complete").write_text(TORCH_WHEEL.name)
            shutil.rmtree(out, ignore_errors=True)
            os.rename(tmp, out)
        return out
    return fetch(dist, version)  # pip download --no-deps + unzip, cached


def build_site(dists: list) -> Path:
    """A site-packages/ holding the dists' .py files (copies), built once per manifest."""
    manifest = "".join(f"{d}=={v}\n" for d, v in dists)
    site = bench_root() / f"site-{hashlib.sha1(manifest.encode()).hexdigest()[:10]}" / "site-packages"
    if (site / ".complete").is_file():
        return site
    bench_root().mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-site-", dir=bench_root())) / "site-packages"
    for d, v in dists:
        src = _unpacked(d, v)
        print(f"bench: copying {d}=={v} from {src}", file=sys.stderr)
        for entry in sorted(src.iterdir()):
            if entry.name.startswith("."):
                continue
            if entry.is_dir():
                shutil.copytree(entry, tmp / entry.name, dirs_exist_ok=True, ignore=_only_py)
            elif entry.suffix == ".py":
                shutil.copy2(entry, tmp / entry.name)
    (tmp / ".complete").write_text(manifest)
    site.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(site, ignore_errors=True)
    os.rename(tmp, site)
    shutil.rmtree(tmp.parent, ignore_errors=True)
    return site


def _only_py(dirpath, names):
    if ".dist-info" in dirpath:
        return []
    return [n for n in names if not (n.endswith(".py") or os.path.isdir(os.path.join(dirpath, n)))]


# ------------------------------------------------------------------------------------------------ runs
def run_scan(site: Path, cache, jobs: int, label: str, out_dir: Path, daemon_env: Optional[dict] = None) -> dict:
    """One scan in a process of its own; with ``daemon_env``, answered by the `compile-lint daemon` that
    environment reaches (``--daemon``: the wall time is the client's).  ``state_written_s``: how long after the
    answer the result and state were written (by the daemon, or by the command's child: lint/cli.py)."""
    out = out_dir / f"{label}.json"
    cmd = [str(Path(sys.executable).parent / "compile-lint"), "scan", str(site), "--no-environment", "-q",
           "--format", "json", "-o", str(out), "--jobs", str(jobs)]
    cmd += ["--cache-dir", str(cache), "--incremental"] if cache else ["--no-cache"]
    cmd += ["--daemon"] if daemon_env is not None else []
    err_file = out_dir / f"{label}.stderr"
    t0 = time.monotonic()
    with open(err_file, "w") as fh:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=fh, env=daemon_env)
        _, status, ru = os.wait4(proc.pid, 0)  # this child's own rusage (its workers included once reaped)
    wall = time.monotonic() - t0
    written = None
    if daemon_env is not None:  # the daemon answers `status` once it has written the state
        t1 = time.monotonic()
        _daemon("status", daemon_env)
        written = time.monotonic() - t1
    elif cache:
        written = _written_behind(cache)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = err_file.read_text(errors="replace")
    ok = proc.returncode in (0, 1) and "internal error" not in err and "Traceback" not in err
    doc = json.loads(out.read_text()) if ok and out.is_file() else {}
    st = doc.get("stats", {})
    return {"label": label, "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024,
            "state_written_s": written,
            "rc": proc.returncode, "ok": ok, "stderr": err.strip()[-2000:], "stats": st,
            "fingerprints": sorted(f.get("fingerprint", "") for f in doc.get("findings", ())),
            "skipped": doc.get("skipped_files", [])}


def _written_behind(cache) -> float:
    """How long after the command exited its child had written the result and state (lint/cli.py: a scan's
    own process writes them behind it, holding the results directory locked)."""
    from compile_lint.keptstates import no_writer

    t1 = time.monotonic()
    with no_writer(Path(cache) / "results"):
        return time.monotonic() - t1


def _daemon(op: str, env: dict) -> str:
    """`compile-lint daemon OP` (start, status, stop) in ``env``: its output."""
    return subprocess.run([str(Path(sys.executable).parent / "compile-lint"), "daemon", op], env=env,
                          capture_output=True, text=True).stdout.strip()


def _parse_chunk(paths: list) -> tuple:
    import libcst

    n_bytes, failed = 0, 0
    for p in paths:
        data = Path(p).read_bytes()
        n_bytes += len(data)
        try:
            libcst.parse_module(data)
        except Exception:  # libcst rejects some files ast accepts (and vice versa): counted, not fatal
            failed += 1
    return n_bytes, failed


def baseline(site: Path, jobs: int, budget_s: float) -> dict:
    """libcst parsing every .py file of the site (torch included), on `jobs` worker processes."""
    files = sorted(str(p) for p in site.rglob("*.py"))
    sizes = {p: os.path.getsize(p) for p in files}
    total = sum(sizes.values())
    # calibrate on ~1% of the bytes to decide whether the whole set fits the budget
    probe = files[::97]
    t0 = time.monotonic()
    probe_bytes, _ = _parse_chunk(probe)
    rate = probe_bytes / max(time.monotonic() - t0, 1e-3)  # bytes/s on one core
    est = total / rate / jobs
    step = 1 if est <= budget_s else max(2, int(est / budget_s) + 1)
    sample = files[::step]
    chunks = [sample[i:i + 40] for i in range(0, len(sample), 40)]
    t0 = time.monotonic()
    with ProcessPoolExecutor(jobs) as pool:
        res = list(pool.map(_parse_chunk, chunks))
    elapsed = time.monotonic() - t0
    done = sum(b for b, _ in res)
    return {"files": len(files), "bytes": total, "sampled_files": len(sample), "sample_step": step,
            "elapsed_s": elapsed, "wall_s": elapsed * total / max(done, 1), "failed": sum(f for _, f in res),
            "extrapolated": step > 1}


def _ast_chunk(paths: list) -> int:
    import ast

    n = 0
    for p in paths:
        data = Path(p).read_bytes()
        n += len(data)
        try:
            ast.parse(data)
        except (SyntaxError, ValueError):
            pass
    return n


def parse_floor(site: Path, jobs: int) -> dict:
    """The stdlib ``ast`` reading and parsing every .py file of the site, on ``jobs`` worker processes: what any
    analysis that parses the site costs at least.  The incremental rows are stated as ratios to it."""
    files = sorted(str(p) for p in site.rglob("*.py"))
    chunks = [files[i:i + 40] for i in range(0, len(files), 40)]
    t0 = time.monotonic()
    with ProcessPoolExecutor(jobs) as pool:
        n = sum(pool.map(_ast_chunk, chunks))
    return {"files": len(files), "bytes": n, "wall_s": time.monotonic() - t0}


# ------------------------------------------------------------------------------------------ incremental rows
def _find_function(tree, qualname: str):
    """The def of ``qualname`` (``C.m``, ``f``; closures' ``<locals>`` parts skipped) in a parsed module."""
    import ast

    parts = [p for p in qualname.split(".") if p != "<locals>"]
    nodes = tree.body
    found = None
    for part in parts:
        found = next((n for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      and n.name == part), None)
        if found is None:
            return None
        nodes = found.body
    return found if found is not None and not isinstance(found, ast.ClassDef) else None


def code_edit(path: Path, qualname: str) -> Optional[bytes]:
    """The file with an environment read put in front of the first one-line statement of ``qualname``'s body,
    on the same line (no line moves): a code edit that changes that function's summary and adds a hazard."""
    import ast

    src = path.read_bytes()
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return None
    fn = _find_function(tree, qualname)
    if fn is None:
        return None
    for st in fn.body:
        if st.lineno != st.end_lineno or isinstance(st, (ast.If, ast.For, ast.While, ast.With, ast.Try,
                                                          ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue  # the docstring
        lines = src.split(b"\n")
        line = lines[st.lineno - 1]
        if line[:st.col_offset].strip():
            continue  # `if x: y` on one line
        lines[st.lineno - 1] = (line[:st.col_offset] + b'_cl_bench = __import__("os").environ.get("CL_BENCH"); '
                                + line[st.col_offset:])
        return b"\n".join(lines)
    return None


def pick_edits(doc: dict, site: Path, n_leaf: int) -> dict:
    """From a cold scan's report: ``n_leaf`` functions holding a hazard that only one region's reported paths go
    through (in distinct files), and the function of flashinfer/jit/core.py on the paths of the most regions."""
    # the regions whose reported paths go through each function (a finding's regions_reaching counts the
    # regions reaching that hazard under one fix point: a function on the paths of most regions can hold one
    # that one region reaches, e.g. behind one cached loader)
    through: dict = {}
    for f in doc.get("findings", ()):
        regions = {(f["region"]["path"], f["region"]["line"])}
        regions.update((o["path"], o["line"]) for o in f.get("other_regions", ()))
        for fr in list(f["trace"]) + [{"path": f["path"], "qualname": f["qualname"]}]:
            through.setdefault((fr["path"], fr["qualname"]), set()).update(regions)
    leaves, files = [], set()
    for f in sorted(doc.get("findings", ()), key=lambda f: f.get("fingerprint", "")):
        path = site / f["path"] if not os.path.isabs(f["path"]) else Path(f["path"])
        if len(through.get((f["path"], f["qualname"]), ())) != 1 or path in files or "<" in f["qualname"]:
            continue
        if str(path).replace("\\", "/").endswith(HUB_FILE):
            continue  # the hub's own row
        if not str(path).startswith(str(site)) or code_edit(path, f["qualname"]) is None:
            continue
        leaves.append((path, f["qualname"]))
        files.add(path)
        if len(leaves) == n_leaf:
            break
    reach: dict = {}
    for f in doc.get("findings", ()):
        region = (f["region"]["path"], f["region"]["line"])
        for fr in f["trace"]:
            if fr["path"].replace("\\", "/").endswith(HUB_FILE):
                reach.setdefault(fr["qualname"], set()).add(region)
                for other in f.get("other_regions", ()):
                    reach[fr["qualname"]].add((other["path"], other["line"]))
    hub = None
    for qual, regions in sorted(reach.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        path = site / "flashinfer" / "jit" / "core.py"
        if path.is_file() and code_edit(path, qual) is not None:  # (not in the pre-commit row's checkout)
            hub = (path, qual, len(regions))
            break
    return {"leaves": leaves, "hub": hub}


def new_region_edit(path: Path) -> bytes:
    """A compiled region appended to ``path`` (a region candidate that imports torch): lines do not move."""
    return path.read_bytes() + (b"\n\n@torch.compile(fullgraph=True)\ndef _cl_bench_region(x):\n"
                                b"    return SiluAndMul().forward_native(x)\n")


def incremental_rows(site: Path, cache: Path, jobs: int, out_dir: Path, verify: bool, n_leaf: int,
                     daemon_env: Optional[dict] = None) -> list:
    """Each edit on the warm cache, timed, then undone (the next row starts from the original tree again,
    after a run that brings the cache back); each row's findings against a --no-cache scan of the edited
    tree (``verify``).  With ``daemon_env``, the edits' scans and the restoring ones go through the daemon
    (rows labelled "... daemon"; its first edit reads the state from disk)."""
    cold = json.loads((out_dir / "cold.json").read_text())
    picks = pick_edits(cold, site, n_leaf)
    edits = [(f"leaf {i + 1}", p, code_edit(p, q), f"{p.relative_to(site)}:{q}")
             for i, (p, q) in enumerate(picks["leaves"])]
    if picks["hub"] is not None:
        p, q, n = picks["hub"]
        edits.append(("hub", p, code_edit(p, q), f"{p.relative_to(site)}:{q} (on the paths of {n} regions)"))
    act = site / EDIT_FILE
    if act.is_file():
        edits.append(("new region", act, new_region_edit(act), f"{EDIT_FILE}: a @torch.compile function appended"))
    rows = []
    restored = None
    for label, path, data, what in edits:
        original = path.read_bytes()
        if daemon_env is not None:
            label += " daemon"
        try:
            path.write_bytes(data)
            r = run_scan(site, cache, jobs, label.replace(" ", "-"), out_dir, daemon_env)
            r["what"] = what
            if verify:
                ref = run_scan(site, _fresh_results(cache, out_dir), jobs, label.replace(" ", "-") + "-full",
                               out_dir)
                r["verified"] = ref["ok"] and ref["fingerprints"] == r["fingerprints"]
        finally:
            path.write_bytes(original)
        restored = run_scan(site, cache, jobs, "restored", out_dir, daemon_env)  # the cache back at the original tree
        rows.append(r)
    return rows, restored


def _fresh_results(cache: Path, out_dir: Path) -> Path:
    """A cache directory with the same summaries and no result: a full scan (the walk of every region, from
    the cached summaries), the reference an incremental row must equal; cheaper than --no-cache, which also
    parses every file again."""
    d = Path(tempfile.mkdtemp(prefix="full-", dir=out_dir))
    for entry in cache.iterdir():
        if entry.name != "results":
            (d / entry.name).symlink_to(entry)
    return d


def precommit_row(jobs: int, out_dir: Path, verify: bool, daemon_env: Optional[dict] = None) -> list:
    """``compile-lint precommit`` on a checkout of sglang 0.5.23's source (from PyPI) with flashinfer 0.7.2 on
    the search path: primed, then after a one-file code edit in a function that one region reaches.  With
    ``daemon_env``, the same edit again through `compile-lint daemon` (``precommit --daemon``), after a run of
    the unchanged tree through it (a hit, after which the daemon reads the state): its findings checked
    against the row in a process of its own."""
    sgl, fi = fetch("sglang", "0.5.23"), fetch("flashinfer-python", "0.7.2.post1")
    # (in one place from run to run, as the site: the reports' fingerprints hold the absolute path, and the
    # edit is picked by them -- in the run's temporary directory each run edited another function)
    repo = bench_root() / "precommit" / "sglang-checkout"
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(sgl / "sglang", repo / "sglang", ignore=_only_py)
    subprocess.run(["git", "init", "-q", str(repo)], check=False)
    cache = out_dir / "precommit-cache"
    exe = str(Path(sys.executable).parent / "compile-lint")

    def run(label: str, files: list, use_cache: bool = True, env: Optional[dict] = None) -> dict:
        out = out_dir / f"{label}.json"
        cmd = [exe, "precommit", *map(str, files), "--root", str(repo), "--search-path", str(fi), "--format", "json",
               "--incremental"]
        cmd += ["--cache-dir", str(cache)] if use_cache else ["--no-cache"]
        cmd += ["--daemon"] if env is not None else []
        t0 = time.monotonic()
        with open(out, "w") as fh:
            proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.PIPE, text=True, cwd=repo, env=env)
        wall = time.monotonic() - t0
        if env is not None:  # the daemon answers `status` once it has written the state
            _daemon("status", env)
        written = _written_behind(cache) if use_cache else None
        try:
            doc = json.loads(out.read_text())
        except ValueError:
            doc = {}
        return {"label": label, "wall_s": wall, "state_written_s": written, "cpu_s": 0.0, "rss_mb": 0.0,
                "rc": proc.returncode,
                "ok": proc.returncode in (0, 1) and "Traceback" not in proc.stderr, "stderr": proc.stderr[-2000:],
                "stats": doc.get("stats", {}), "fingerprints": sorted(f.get("fingerprint", "")
                                                                      for f in doc.get("findings", ()))}

    prime = run("precommit-prime", [])
    scan_doc = json.loads((out_dir / "precommit-prime.json").read_text() or "{}")
    picks = pick_edits(scan_doc, repo, 1)
    rows = [prime]
    if not picks["leaves"]:
        return rows
    path, qual = picks["leaves"][0]
    original = path.read_bytes()
    edited = code_edit(path, qual)
    try:
        path.write_bytes(edited)
        r = run("precommit-edit", [path])
        r["what"] = f"{path.relative_to(repo)}:{qual}"
        if verify:
            ref = run("precommit-edit-nocache", [path], use_cache=False)
            r["verified"] = ref["ok"] and ref["fingerprints"] == r["fingerprints"]
        rows.append(r)
    finally:
        path.write_bytes(original)
    if daemon_env is None:
        return rows
    print(_daemon("start", daemon_env))
    try:
        run("precommit-restored", [path])  # in a process of its own: the state back at the unchanged tree
        primed = run("precommit-primed-d", [path], env=daemon_env)  # a hit; the daemon then reads the state
        rows.append(primed)
        try:
            path.write_bytes(edited)
            d = run("precommit-edit daemon", [path], env=daemon_env)
            d["what"] = r["what"]
            d["verified"] = d["ok"] and r.get("verified", True) and d["fingerprints"] == r["fingerprints"]
            rows.append(d)
        finally:
            path.write_bytes(original)
    finally:
        print(_daemon("status", daemon_env))
        _daemon("stop", daemon_env)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--only", default="", help="comma-separated dists (default: all of " +
                    ", ".join(d for d, _ in DISTS) + ")")
    ap.add_argument("--baseline-budget", type=float, default=120.0, help="seconds the libcst baseline may take")
    ap.add_argument("--skip-nocache", action="store_true", help="skip the --no-cache reference run")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--leaf-edits", type=int, default=3, help="leaf functions edited (the median is the figure)")
    ap.add_argument("--no-verify", action="store_true", help="do not check each incremental row against a full "
                    "scan of the edited tree (the restored tree is still checked)")
    ap.add_argument("--skip-precommit", action="store_true", help="skip the pre-commit row")
    ap.add_argument("--skip-baseline", action="store_true", help="skip the libcst baseline (the parse floor stays)")
    ap.add_argument("--daemon", action="store_true", help="also run the incremental rows through `compile-lint "
                    "daemon` (its own, in a private user cache directory), after the rows in their own process")
    args = ap.parse_args()
    dists = [dv for dv in DISTS if not args.only or dv[0] in args.only.split(",")]
    site = build_site(dists)
    n_py = sum(1 for _ in site.rglob("*.py"))
    print(f"site: {site} ({', '.join(f'{d}=={v}' for d, v in dists)}; {n_py} .py files)")
    print(f"machine: {len(os.sched_getaffinity(0))} cores, "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB; jobs={args.jobs}; "
          f"load average at start {os.getloadavg()[0]:.1f}")
    work = Path(tempfile.mkdtemp(prefix="compile-lint-bench-"))
    cache = work / "cache"
    runs = []
    try:
        runs.append(run_scan(site, cache, args.jobs, "cold", work))
        runs.append(run_scan(site, cache, args.jobs, "warm", work))
        edit = site / EDIT_FILE
        if not edit.is_file():
            edit = next(p for p in sorted(site.rglob("*.py")) if b"torch.compile" in p.read_bytes())
        original = edit.read_bytes()
        try:
            # a comment: the file is re-hashed and re-indexed, its summary is unchanged, the result stands
            edit.write_bytes(original + b"\n# compile-lint bench: one-file edit\n")
            runs.append(run_scan(site, cache, args.jobs, "edit", work))
            # code: a new (uncalled) function changes the summary, so every region is walked again (from
            # cached summaries); no target, reported for what it is
            edit.write_bytes(original + b"\n\ndef _compile_lint_bench_edit():\n    return 1\n")
            runs.append(run_scan(site, cache, args.jobs, "edit-code", work))
        finally:
            edit.write_bytes(original)
        inc_rows, restored = incremental_rows(site, cache, args.jobs, work, not args.no_verify, args.leaf_edits)
        if restored is not None:
            runs.append(restored)  # every edit undone: the findings of the original tree again
        if args.daemon:
            denv = dict(os.environ, COMPILE_LINT_CACHE_DIR=str(work / "daemon-home"))
            print(_daemon("start", denv))
            try:
                # what a daemon that has answered once is: a scan of the unchanged tree (a result cache hit),
                # after which it reads the state for the next edit (keptstates._PRIMED); the first edit of a
                # daemon that has not, reads it while the user waits (the README's rows say so)
                primed = run_scan(site, cache, args.jobs, "daemon-primed", work, denv)
                print(f"daemon primed: a hit in {primed['wall_s']:.1f}s, the state read "
                      f"{primed['state_written_s']:.1f}s after it")
                more, restored = incremental_rows(site, cache, args.jobs, work, False, args.leaf_edits, denv)
                own = {r["label"]: r for r in inc_rows}
                for r in more:  # the same findings as the row in a process of its own (verified, that one)
                    twin = own.get(r["label"][:-len(" daemon")])
                    if twin is not None and r["ok"]:
                        r["verified"] = twin.get("verified", True) and twin["fingerprints"] == r["fingerprints"]
                inc_rows += more
            finally:
                print(_daemon("status", denv))
                _daemon("stop", denv)
            if restored is not None:
                restored["label"] = "restored-d"
                runs.append(restored)
        pre_rows = [] if args.skip_precommit else precommit_row(
            args.jobs, work, not args.no_verify,
            dict(os.environ, COMPILE_LINT_CACHE_DIR=str(work / "daemon-home-precommit")) if args.daemon else None)
        if not args.skip_nocache:
            runs.append(run_scan(site, None, args.jobs, "no-cache", work))
        floor = parse_floor(site, args.jobs)
        base = dict(floor, extrapolated=False, failed=0) if args.skip_baseline else baseline(
            site, args.jobs, args.baseline_budget)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    failures = []
    print(f"\n{'run':<9} {'wall s':>8} {'cpu s':>8} {'peak RSS MB':>12} {'parsed':>7} {'cache hits':>10} "
          f"{'findings':>9} {'vs libcst':>9}  result cache")
    for r in runs:
        st = r["stats"]
        print(f"{r['label']:<10}{r['wall_s']:8.1f} {r['cpu_s']:8.1f} {r['rss_mb']:12.0f} "
              f"{st.get('files_parsed', '?'):>7} {st.get('cache_hits', '?'):>10} {len(r['fingerprints']):>9} "
              f"{r['wall_s'] / base['wall_s']:8.2f}x  {st.get('result_cache', '')}")
        if not r["ok"]:
            failures.append(f"{r['label']}: rc={r['rc']} {r['stderr'][-300:]}")
        target = TARGETS.get(r["label"])
        if target is not None and r["wall_s"] > target:
            failures.append(f"{r['label']}: {r['wall_s']:.1f}s > {target:.0f}s target ({r['wall_s'] / target:.1f}x)")
        if r["rss_mb"] > RSS_TARGET_MB:
            failures.append(f"{r['label']}: peak RSS {r['rss_mb']:.0f} MB > {RSS_TARGET_MB} MB "
                            f"({r['rss_mb'] / RSS_TARGET_MB:.1f}x)")
    print(f"baseline (libcst.parse_module, every .py file, {args.jobs} workers): {base['wall_s']:.1f}s for "
          f"{base['files']} files / {base['bytes'] / 1e6:.0f} MB" +
          (f" -- EXTRAPOLATED by bytes from every {base['sample_step']}th file ({base['sampled_files']} files, "
           f"{base['elapsed_s']:.1f}s)" if base["extrapolated"] else "") +
          f"; {base['failed']} file(s) libcst could not parse")
    print(f"parse floor (ast.parse, every .py file, {args.jobs} workers): {floor['wall_s']:.1f}s for "
          f"{floor['files']} files / {floor['bytes'] / 1e6:.0f} MB")
    # written: seconds after the answer until the result and state were written (by the command's child, or
    # the daemon); kept: visits a replay took the reports of from the previous findings
    print(f"\n{'row':<16} {'wall s':>7} {'vs floor':>9} {'written':>8} {'walked':>7} {'reused':>7} "
          f"{'reindexed':>9} {'kept':>8} {'= cold':>7}  edit")
    for r in runs + inc_rows + pre_rows:
        st = r["stats"]
        inc = st.get("incremental", {})
        written = r.get("state_written_s")
        print(f"{r['label'][:16]:<16} {r['wall_s']:7.1f} {r['wall_s'] / floor['wall_s']:8.2f}x "
              f"{'-' if written is None else f'{written:.1f}':>8} "
              f"{inc.get('regions_walked', '-'):>7} {inc.get('regions_reused', '-'):>7} "
              f"{inc.get('files_reindexed', st.get('files_parsed', '-')):>9} {inc.get('visits_kept', '-'):>8} "
              f"{str(r.get('verified', '')):>7}  {r.get('what', st.get('result_cache', ''))}")
        if not r["ok"]:
            failures.append(f"{r['label']}: rc={r['rc']} {r['stderr'][-300:]}")
        if r.get("verified") is False:
            failures.append(f"{r['label']}: findings differ from a --no-cache scan of the edited tree")
    for how, rows in (("", [r for r in inc_rows if not r["label"].endswith("daemon")]),
                      (" through the daemon", [r for r in inc_rows if r["label"].endswith("daemon")])):
        leaf = sorted(r["wall_s"] for r in rows if r["label"].startswith("leaf"))
        if leaf:
            median = leaf[len(leaf) // 2]
            print(f"leaf edits{how}: median {median:.1f}s = {median / floor['wall_s']:.2f}x the parse floor "
                  f"(target 0.1x)")
    args_json_extra = {"parse_floor": floor, "incremental": inc_rows, "precommit": pre_rows}
    ref = runs[-1]["fingerprints"] if runs else []
    for r in runs:
        if r["ok"] and r["fingerprints"] != ref:
            failures.append(f"{r['label']}: findings differ from the {runs[-1]['label']} run "
                            f"({len(r['fingerprints'])} vs {len(ref)})")
    cold = runs[0]["stats"] if runs else {}
    skipped = runs[0]["skipped"] if runs else []
    print(f"cold stats: {json.dumps(cold, sort_keys=True)}")
    print(f"skipped files (reported once each): {len(skipped)}")
    for s in skipped[:20]:
        print(f"  {s.get('path')}: {s.get('reason')}")
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "baseline": base, "failures": failures, **args_json_extra},
                                        indent=1, default=str))
    print("\n" + ("all targets met" if not failures else "NOT MET:\n  " + "\n  ".join(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
