"""Helpers for the GPU proof (``tests/gpu``): skips, FlashInfer's location, scans, fixed copies, CUDA graphs,
graph-break accounting.

Importing this module imports neither flashinfer nor anything that needs CUDA; every test calls
``require_cuda()`` / ``require_flashinfer()`` first and is skipped with the reason when they are missing.
"""
from __future__ import annotations

import importlib.util
import logging
import os
import re
import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FLASHINFER_VERSION_CHECKED = "0.7.2.post1"


# ------------------------------------------------------------------------------------------------ skips
def require_cuda():
    """Skip unless torch sees a CUDA device; returns torch."""
    try:
        import torch
    except ImportError as e:  # pragma: no cover
        pytest.skip(f"torch not importable: {e}")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device (torch.cuda.is_available() is False)")
    return torch


def require_flashinfer():
    """Skip unless flashinfer imports; returns the module."""
    if importlib.util.find_spec("flashinfer") is None:
        pytest.skip("flashinfer is not importable (not installed / not on PYTHONPATH)")
    try:
        import flashinfer
    except Exception as e:  # a broken install is a skip here, not a failure of compile-lint
        pytest.skip(f"flashinfer is installed but does not import: {type(e).__name__}: {e}")
    return flashinfer


def require_capability(major: int):
    torch = require_cuda()
    cap = torch.cuda.get_device_capability()
    if cap[0] != major:
        pytest.skip(f"needs compute capability {major}.x (this device, {torch.cuda.get_device_name()}, "
                    f"is {cap[0]}.{cap[1]})")
    return cap


def capability() -> tuple:
    import torch

    return torch.cuda.get_device_capability()


# ------------------------------------------------------------------------------------------------ sources
def flashinfer_site(allow_cache: bool = False):
    """The directory holding the ``flashinfer`` package, found without importing it:
    ``$COMPILE_LINT_FLASHINFER_SITE``, else where ``importlib`` would import it from, else (``allow_cache``) the
    real-world fixture cache (``tests/realworld/pypi_fixtures.py``; never downloads).  None when not on disk."""
    env = os.environ.get("COMPILE_LINT_FLASHINFER_SITE")
    if env and (Path(env) / "flashinfer" / "__init__.py").is_file():
        return Path(env).resolve()
    spec = importlib.util.find_spec("flashinfer") if "flashinfer" not in sys.modules else sys.modules[
        "flashinfer"].__spec__
    if spec is not None and spec.origin:
        return Path(spec.origin).resolve().parent.parent
    if allow_cache:
        try:
            from realworld.pypi_fixtures import cache_root
        except ImportError:
            return None
        cand = cache_root() / f"flashinfer-python-{FLASHINFER_VERSION_CHECKED}"
        if (cand / "flashinfer" / "__init__.py").is_file():
            return cand.resolve()
    return None


def scan_file(path, site, cache_dir=None, **kw):
    """compile-lint's scan of one file with FlashInfer on the search path (nothing is imported)."""
    from compile_lint.engine import ScanOptions, scan

    opts = ScanOptions(paths=[Path(path)], search_path=[Path(site)], use_environment=False, cache_dir=cache_dir,
                       **kw)
    t = time.perf_counter()
    result = scan(opts)
    log(f"scan {Path(path).name} {kw or ''}: {len(result.findings)} findings, "
        f"regions {[r.label for r in result.regions]}, {time.perf_counter() - t:.1f} s")
    return result, opts


def names(finding) -> list:
    return [fr.qualname for fr in finding.trace]


def through(finding, hop: str) -> bool:
    """Whether the finding's path runs through a function named ``hop`` (a qualname or its last part)."""
    return any(n == hop or n.endswith("." + hop) for n in names(finding))


def predicted_stops_through(result, hop: str) -> list:
    """The findings of a fullgraph region that predict a Dynamo stop on a path through the function ``hop``:
    errors (met on every trace), and warnings that name the branches they need (a loader behind
    ``if _use_cuda_norm(device):``, decided by the installed CuTe DSL and the device)."""
    return [f for f in result.findings if f.region.fullgraph is True and through(f, hop)
            and (f.severity == "error" or (f.severity == "warning" and f.conditions and f.rule.startswith("CL1")))]


def rel_to(path, root) -> str:
    try:
        return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


# ------------------------------------------------------------------------------------------------ fixing
@dataclass
class FixedCopy:
    path: Path  # the fixed copy of the model file
    module: object  # the imported fixed copy
    report: object  # compile-lint's FixReport
    text: str
    generated: Path  # _compile_lint_ops.py next to it (may not exist)
    notes: list = field(default_factory=list)


def copy_model(name: str, dst_dir: Path) -> Path:
    dst_dir.mkdir(parents=True, exist_ok=True)
    dst = dst_dir / f"{name}.py"
    shutil.copyfile(HERE / f"{name}.py", dst)
    return dst


def import_file(path: Path, module_name: str):
    """Import ``path`` as ``module_name`` with its directory first on sys.path (for ``import _compile_lint_ops``)."""
    d = str(path.parent)
    if d in sys.path:
        sys.path.remove(d)
    sys.path.insert(0, d)
    sys.modules.pop("_compile_lint_ops", None)  # a generated module of another fixed copy
    spec = importlib.util.spec_from_file_location(module_name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = mod
    spec.loader.exec_module(mod)
    return mod


def run_fix(path: Path, site, fix_options, cache_dir=None, **scan_kw):
    from compile_lint.engine import ScanOptions
    from compile_lint.fixers import fix

    opts = ScanOptions(paths=[path], search_path=[Path(site)], use_environment=False, cache_dir=cache_dir,
                       **scan_kw)
    t = time.perf_counter()
    report = fix(opts, fix_options)
    log(f"fix {path.name}: applied {[p.summary() for p in report.applied]}; "
        f"skipped {[(p.summary(), why) for p, why in report.skipped]}; rounds {report.rounds}; "
        f"{time.perf_counter() - t:.1f} s")
    return report


# ------------------------------------------------------------------------------------------------ Dynamo
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def user_frames(message: str) -> list:
    """(file, line, function) of the "from user code:" part of a Dynamo error message."""
    tail = message.split("from user code:", 1)[-1]
    return [(f, int(n), fn) for f, n, fn in _FRAME.findall(tail)]


def under(path, root) -> bool:
    try:
        Path(path).resolve().relative_to(Path(root).resolve())
        return True
    except ValueError:
        return False


_BREAK_AT = re.compile(r"in user code at (.+?):(\d+)\s*$", re.M)


class GraphBreaks:
    """Counts graph breaks with ``torch._dynamo.utils.counters["graph_break"]`` and records where each one was
    and the user stack that led there (Dynamo's ``graph_breaks`` log artifact: "Graph break in user code at
    FILE:LINE" + "User code traceback").  A break whose stack Dynamo suppressed as a duplicate inherits the stack
    of the earlier break at the same location."""

    def __init__(self):
        self.records: list = []
        self.count = 0
        self.reasons: dict = {}
        self.breaks: list = []  # [((file, line), [(file, line, function), ...])]
        self.skipped_frames = 0  # logged events where Dynamo gave up on a whole frame ("falling back to eager")

    @contextmanager
    def capture(self):
        import torch
        import torch._dynamo.utils as dynamo_utils
        from torch._dynamo.utils import counters

        counters.clear()
        checker = getattr(dynamo_utils, "graph_break_dup_warning_checker", None)
        if checker is not None:  # else duplicates are logged without their stack
            checker.reset()
        handler = _ListHandler(self.records)
        loggers = [torch._logging.getArtifactLogger(m, "graph_breaks")
                   for m in ("torch._dynamo.symbolic_convert", "torch._dynamo.convert_frame")]
        torch._logging.set_logs(graph_breaks=True)
        for lg in loggers:
            lg.addHandler(handler)
        try:
            yield self
        finally:
            for lg in loggers:
                lg.removeHandler(handler)
            torch._logging.set_logs()
            self.reasons = dict(counters["graph_break"])
            self.count = sum(self.reasons.values())
            stacks: dict = {}
            for msg in self.records:
                at = _BREAK_AT.search(msg)
                if not at:
                    continue
                loc = (at.group(1), int(at.group(2)))
                frames = [(f, int(n), fn) for f, n, fn in _FRAME.findall(msg.split("User code traceback:", 1)[-1])] \
                    if "User code traceback:" in msg else stacks.get(loc, [])
                stacks.setdefault(loc, frames)
                self.breaks.append((loc, frames))
                self.skipped_frames += "falling back to eager" in msg

    @property
    def locations(self) -> list:
        return [loc for loc, _ in self.breaks]

    def inside(self, root) -> list:
        """The breaks located in, or reached through, a file under ``root``: [(location, first frame there)]."""
        out = []
        for loc, frames in self.breaks:
            hits = [(f, n) for f, n, _ in frames if under(f, root)] + ([loc] if under(loc[0], root) else [])
            if hits:
                out.append((loc, hits[0]))
        return out

    def summary(self, root=None) -> str:
        def short(f):
            return rel_to(f, root) if root and under(f, root) else Path(f).name

        locs = [f"{short(f)}:{n}" for f, n in self.locations]
        return (f"{self.count} graph breaks (counters); {len(self.breaks)} logged events ({self.skipped_frames} of "
                f"them whole frames skipped to eager) at {locs}; "
                f"{len(self.inside(root)) if root else '?'} located in or reached through {root}; reasons "
                f"{[r.strip().splitlines()[0][:90] for r in self.reasons]}")


class _ListHandler(logging.Handler):
    def __init__(self, sink: list):
        super().__init__(logging.DEBUG)
        self.sink = sink

    def emit(self, record):
        try:
            self.sink.append(record.getMessage())
        except Exception:  # pragma: no cover
            pass


# ------------------------------------------------------------------------------------------------ CUDA graphs
def capture_and_replay(fn, static_in, new_in, warmup: int = 3):
    """Warm ``fn`` up on a side stream, capture one call in a ``torch.cuda.CUDAGraph``, copy ``new_in`` into the
    static input, replay.  Returns (graph, static output after the replay)."""
    import torch

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warmup):
            fn(static_in)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = fn(static_in)
    static_in.copy_(new_in)
    g.replay()
    torch.cuda.synchronize()
    return g, static_out


def bits(t):
    """A tensor's raw bytes as a uint8 view (bitwise comparison, NaN and -0.0 included)."""
    return t.contiguous().view(-1).view(__import__("torch").uint8)


def bitwise_equal(a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and bool((bits(a) == bits(b)).all())


# ------------------------------------------------------------------------------------------------ log
def log(msg: str):
    """One line in the test log (pytest -rA / -s shows it); prefixed so it can be grepped and quoted."""
    print(f"[gpu-proof] {msg}", flush=True)
