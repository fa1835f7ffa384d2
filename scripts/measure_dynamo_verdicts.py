#!/usr/bin/env python
"""Measure what the installed torch's Dynamo does with each callee of ``compile_lint.dynamo.probes``.

    python scripts/measure_dynamo_verdicts.py --out lint/dynamo/data/verdicts-torch-2.13.json

The parent imports torch once (and compiles one trivial function, so Dynamo's lazy imports are done), then forks
one child per probe: each child runs one probe in a fresh copy of that process, under
``torch.compile(fn, fullgraph=True, backend="eager")``, writes one JSON line to a pipe and exits.  A child that
outlives ``--timeout`` is killed (verdict ``timeout``); one that dies without answering is ``crashed``.

Verdicts: ``compiles`` (with ``baked``/``guarded`` when the probe changes the environment or the clock between
two calls, and ``equals_eager`` when the value is compared), ``unsupported`` / ``error`` (a Dynamo exception:
class, first message line, GB id parsed from the message, and the skipped C function from its debug context),
``raised`` (the compiled call raised a non-Dynamo exception: the call itself ran), ``not-installed``,
``not-available`` (a newer Python's API), ``timeout``, ``crashed``.

Fork only: POSIX.  CUDA cannot be used in a forked child once the parent has initialised it, so on a machine
with a GPU the script hides it (``CUDA_VISIBLE_DEVICES=""``, unless already set): the probes measure Dynamo's
host-side model, and the table records ``"gpu": "hidden"``.  tests/test_dynamo_verdicts.py runs this file.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import select
import shutil
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TIMEOUT_S = 30.0
GB_RE = re.compile(r"\bgb(\d{4})\b", re.IGNORECASE)
CONTEXT_RE = re.compile(r"module: ([\w.]+), qualname: ([\w.<>]+)")
DYNAMO_EXC_PREFIXES = ("torch._dynamo.", "torch._subclasses.", "torch.fx.")


def _load_probes():
    try:
        from compile_lint.dynamo import probes
    except ImportError:  # run from a checkout that is not installed
        import importlib.util

        spec = importlib.util.spec_from_file_location("compile_lint_probes", ROOT / "lint" / "dynamo" / "probes.py")
        probes = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = probes
        spec.loader.exec_module(probes)
    return probes


def _fixtures(tmp: str) -> None:
    """The files every probe's setup may use (see probes.py)."""
    with open(os.path.join(tmp, "f.txt"), "w") as f:
        f.write("1.5\n")
    with open(os.path.join(tmp, "data.json"), "w") as f:
        f.write('{"a": 1}')
    import pickle

    with open(os.path.join(tmp, "data.pkl"), "wb") as f:
        pickle.dump({"a": 1}, f)
    os.mkdir(os.path.join(tmp, "d"))
    with open(os.path.join(tmp, "d", "a.txt"), "w") as f:
        f.write("a")
    os.symlink(os.path.join(tmp, "f.txt"), os.path.join(tmp, "link"))


def _function_source(probe) -> str:
    if probe.body:
        inner = "\n".join("    " + line for line in probe.body.splitlines())
        return f"def fn(x):\n{inner}\n    return x + 1, None\n"
    if probe.returns or probe.change:
        return f"def fn(x):\n    return x + 1, ({probe.call})\n"
    return f"def fn(x):\n    _ = ({probe.call})\n    return x + 1, None\n"


def _describe_exception(e: BaseException) -> dict:
    cls = type(e)
    name = f"{cls.__module__}.{cls.__qualname__}"
    text = str(e)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    out = {"exception": name, "message": first[:300]}
    gb = GB_RE.search(text)
    if gb:
        out["gb"] = f"GB{gb.group(1)}"
    ctx = CONTEXT_RE.search(text)
    if ctx:
        out["where"] = f"{ctx.group(1)}.{ctx.group(2)}"
    return out


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - a value without a usable ==
        return False


def _run_probe(probe, tmp: str) -> dict:
    """In the child: one probe, one verdict."""
    import torch

    if probe.min_python and sys.version_info[:len(probe.min_python)] < tuple(probe.min_python):
        return {"outcome": "not-available",
                "reason": f"needs Python {'.'.join(map(str, probe.min_python))}"}
    import types

    module = types.ModuleType("compile_lint_probe")  # a real module: dataclasses look their class's module up
    sys.modules[module.__name__] = module
    g = module.__dict__
    g.update(TMP=tmp, os=os, sys=sys)
    try:
        exec(compile(probe.setup, "<probe setup>", "exec"), g)
    except ImportError as e:
        if probe.requires:
            return {"outcome": "not-installed", "reason": f"{type(e).__name__}: {e}"}
        raise
    exec(compile(_function_source(probe), "<probe>", "exec"), g)
    fn = g["fn"]
    x = torch.ones(2)
    compiled = torch.compile(fn, fullgraph=True, backend="eager")
    try:
        first = compiled(x)[1]
    except Exception as e:  # noqa: BLE001 - the verdict is the exception
        out = _describe_exception(e)
        dynamo = out["exception"].startswith(DYNAMO_EXC_PREFIXES)
        if not dynamo:
            out["outcome"] = "raised"
        else:
            out["outcome"] = "unsupported" if out["exception"].endswith(".Unsupported") else "error"
        return out
    out = {"outcome": "compiles"}
    if probe.returns or probe.change:
        eager_first = fn(x)[1]
        out["equals_eager"] = _same(first, eager_first)
    if probe.change:
        exec(compile(probe.change, "<probe change>", "exec"), g)
        second, eager_second = compiled(x)[1], fn(x)[1]
        if _same(eager_first, eager_second):
            out["baked"] = None  # the change did not change the eager value: nothing to tell
        else:
            out["baked"] = _same(second, first) and not _same(second, eager_second)
            out["guarded"] = _same(second, eager_second)
    return out


def _child(name: str, probe, wfd: int, base: str) -> None:
    """Runs in the forked child; never returns."""
    me = os.getpid()
    code = 0
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        # not tempfile: its name sequence is module state, and a probe of tempfile.mkdtemp must find it as a
        # fresh process does (lazily created under a lock: GB0156), not as an earlier call left it (GB0007)
        tmp = os.path.join(base, f"p{me}")
        os.mkdir(tmp)
        _fixtures(tmp)
        try:
            result = _run_probe(probe, tmp)
        except BaseException as e:  # noqa: BLE001 - a broken probe is a verdict too, not a dead runner
            result = {"outcome": "probe-failed", **_describe_exception(e)}
        if os.getpid() != me:  # a probe that forked (os.fork compiled): the copy says nothing
            os._exit(0)
        os.write(wfd, (json.dumps({"name": name, **result}, default=str) + "\n").encode())
        shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:  # noqa: BLE001
        code = 1
    finally:
        if os.getpid() == me:
            os._exit(code)
        os._exit(0)


def _hide_gpu() -> bool:
    """Before torch is imported: a forked child cannot use a CUDA the parent initialised."""
    if "torch" in sys.modules or os.environ.get("CUDA_VISIBLE_DEVICES") is not None:
        return False
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    return True


def _warm_up() -> str:
    import torch

    torch.set_num_threads(1)  # no intra-op thread pool to inherit across fork
    torch.compile(lambda x: x + 1, fullgraph=True, backend="eager")(torch.ones(2))
    torch._dynamo.reset()
    return torch.__version__


def measure(names=None, jobs: int = 2, timeout: float = DEFAULT_TIMEOUT_S, progress=None) -> dict:
    """{callee: verdict} for the probes named (default: all), ``jobs`` children at a time."""
    probes = _load_probes().PROBES
    names = list(probes) if names is None else list(names)
    _hide_gpu()
    _warm_up()
    base = os.path.join(os.environ.get("TMPDIR") or "/tmp", f"cl-probes-{os.getpid()}")
    os.makedirs(base, exist_ok=True)
    try:
        return _measure(probes, names, jobs, timeout, progress, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _measure(probes, names, jobs, timeout, progress, base) -> dict:
    pending = list(names)
    running: dict = {}  # read fd -> (name, pid, started, buffer)
    results: dict = {}
    while pending or running:
        while pending and len(running) < max(1, jobs):
            name = pending.pop(0)
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                _child(name, probes[name], w, base)
            os.close(w)
            running[r] = (name, pid, time.monotonic(), bytearray())
        ready, _, _ = select.select(list(running), [], [], 0.2)
        now = time.monotonic()
        for fd in list(running):
            name, pid, started, buf = running[fd]
            done = False
            if fd in ready:
                chunk = os.read(fd, 65536)
                buf += chunk
                done = not chunk
            if not done and now - started > timeout:
                os.kill(pid, signal.SIGKILL)
                results[name] = {"outcome": "timeout", "reason": f"no answer within {timeout:.0f}s"}
                done = True
            if done:
                os.close(fd)
                os.waitpid(pid, 0)
                del running[fd]
                if name not in results:
                    line = bytes(buf).decode(errors="replace").strip().splitlines()
                    if line:
                        data = json.loads(line[-1])
                        data.pop("name", None)
                        results[name] = data
                    else:
                        results[name] = {"outcome": "crashed", "reason": "the child exited without an answer"}
                if progress:
                    progress(name, results[name])
    return {n: results[n] for n in names}


def table(verdicts: dict) -> dict:
    import platform

    import torch

    gpu = "hidden" if os.environ.get("CUDA_VISIBLE_DEVICES") == "" else "visible"
    return {"torch": torch.__version__, "python": platform.python_version(),
            "measured": datetime.date.today().isoformat(), "probes": len(verdicts), "gpu": gpu,
            "verdicts": dict(sorted(verdicts.items()))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="write the table here (JSON); default: print it")
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds per probe")
    ap.add_argument("--only", nargs="*", help="measure only these callees")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)

    def show(name, v):
        if args.verbose:
            extra = v.get("gb") or v.get("baked") or v.get("reason") or ""
            print(f"{name:45s} {v['outcome']:14s} {extra}", file=sys.stderr)

    t0 = time.monotonic()
    verdicts = measure(args.only, jobs=args.jobs, timeout=args.timeout, progress=show)
    data = table(verdicts)
    text = json.dumps(data, indent=1, sort_keys=False) + "\n"
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    counts: dict = {}
    for v in verdicts.values():
        counts[v["outcome"]] = counts.get(v["outcome"], 0) + 1
    print(f"{len(verdicts)} probes in {time.monotonic() - t0:.1f}s on torch {data['torch']}: "
          + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
