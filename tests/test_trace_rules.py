"""compile_lint.dynamo.trace_rules: Dynamo's inline/skip data without importing torch."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from compile_lint.dynamo import trace_rules as TR
from compile_lint.dynamo.trace_rules import (
    DUMP_SOURCE,
    PROBE_SOURCE,
    SNAPSHOT_PATH,
    TraceRules,
    clear_memo,
    load_trace_rules,
)

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch not importable")

REPO = Path(__file__).resolve().parent.parent
GEN_SCRIPT = REPO / "scripts" / "gen_trace_rules_snapshot.py"


@pytest.fixture(autouse=True)
def _fresh_memo():
    clear_memo()
    yield
    clear_memo()


@pytest.fixture(scope="module")
def snapshot() -> TraceRules:
    clear_memo()
    return load_trace_rules(use_installed=False)


# ---------------------------------------------------------------------------
# (a) the bundled snapshot, no torch
# ---------------------------------------------------------------------------


def test_module_imports_no_torch():
    code = (
        "import sys\n"
        "from compile_lint.dynamo.trace_rules import load_trace_rules\n"
        "r = load_trace_rules(use_installed=False)\n"
        "assert r.module_skip_reason('re')\n"
        "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_snapshot_metadata(snapshot: TraceRules):
    assert snapshot.origin == "snapshot"
    assert snapshot.source.startswith("bundled snapshot from torch ")
    assert "use_installed=False" in snapshot.source
    assert re.match(r"\d+\.\d+", snapshot.torch_version)
    assert SNAPSHOT_PATH.stat().st_size < 400 * 1024
    assert len(snapshot.in_graph_functions) > 1000
    data = json.loads(SNAPSHOT_PATH.read_text())
    # portable: no absolute paths of the build machine
    assert "sys_path" not in data and "torch_dir" not in data
    assert all(not e["raw"].startswith("/") for e in data["skip_dirs"])


@pytest.mark.parametrize(
    "module,reason",
    [
        ("re", "file is under skip directory (re)"),
        ("importlib", "file is under skip directory (importlib)"),
        ("importlib.metadata", "file is under skip directory (importlib)"),
        ("random", "file is under skip directory (random)"),
        ("abc", "file is under skip directory (abc)"),
        ("linecache", "file is under skip directory (linecache)"),
        ("networkx", "file is under skip directory (networkx)"),
        ("networkx.algorithms.dag", "file is under skip directory (networkx)"),
        ("numpy", "file is under skip directory (numpy)"),
        ("numpy.linalg", "file is under skip directory (numpy)"),
        ("tqdm.auto", "file is under skip directory (tqdm)"),
        ("unittest.mock", "file is in unittest directory"),
        ("torch.cuda", "file matches MOD_SKIPLIST (torch.cuda)"),
        ("torch.optim.lr_scheduler", "file is force-skipped (torch.optim.lr_scheduler)"),
        ("triton.backends.nvidia.driver", "file is under skip directory (triton/backends)"),
    ],
)
def test_snapshot_skipped(snapshot: TraceRules, module: str, reason: str):
    assert snapshot.module_skip_reason(module) == reason


@pytest.mark.parametrize(
    "module",
    [
        "subprocess", "pathlib", "os", "os.path", "functools", "threading", "logging",
        "json", "json.decoder", "typing", "collections", "dataclasses", "contextlib",
        "flashinfer.jit.core", "sglang.srt.foo", "sglang.srt.layers.attention",
        "treelib", "regex", "abcd", "randomx",
        "torch.nn.functional", "torch.optim.adam", "torch._dynamo.external_utils",
        "torch.distributed.tensor", "triton.language",
    ],
)
def test_snapshot_inlined(snapshot: TraceRules, module: str):
    assert snapshot.module_skip_reason(module) is None


def test_copy_is_inlined_only_when_called(snapshot: TraceRules):
    # BUILTIN_SKIPLIST has copy, but BUILTIN_INLINE_WHEN_CALLED wins for inlined calls
    assert snapshot.module_skip_reason("copy") is None
    assert snapshot.module_skip_reason("copy", is_inlined_call=False) == "file is under skip directory (copy)"
    # MOD_INLINELIST only applies to inlined calls too
    assert snapshot.module_skip_reason("torch.nn.functional", is_inlined_call=False) is not None


def test_snapshot_functions(snapshot: TraceRules):
    assert snapshot.is_in_graph_function("torch.cuda.get_device_capability")
    assert snapshot.is_in_graph_function("torch.cuda.is_available")
    assert snapshot.is_in_graph_function("torch.Tensor#split")
    assert not snapshot.is_in_graph_function("torch.manual_seed")
    assert snapshot.is_skip_function("torch.manual_seed")
    assert snapshot.manual_rule("torch.manual_seed") == "SkipFunctionVariable"
    assert not snapshot.is_in_graph_function("os.getenv")
    assert list(snapshot.data["in_graph_functions"]) == sorted(snapshot.data["in_graph_functions"])
    assert all("#" not in n for n in snapshot.in_graph_functions)


def test_snapshot_files(snapshot: TraceRules):
    f = snapshot.file_skip_reason
    assert f("/home/u/.venv/lib/python3.12/site-packages/networkx/algorithms/dag.py")
    assert f("/usr/lib/python3/dist-packages/numpy/__init__.py")
    assert f("/usr/lib/python3.12/re/_parser.py")
    assert f("/usr/lib/python3.12/importlib/metadata/__init__.py")
    assert f("/usr/lib/python3.12/unittest/mock.py") == "file is in unittest directory"
    assert f("<frozen importlib._bootstrap>")
    assert f("/x/site-packages/torch/optim/lr_scheduler.py").startswith("file is force-skipped")
    assert f("/x/site-packages/torch/cuda/__init__.py").startswith("file matches MOD_SKIPLIST")
    assert f("/x/site-packages/torch/nn/functional.py") is None
    assert f("/usr/lib/python3.12/copy.py") is None
    assert f("/usr/lib/python3.12/subprocess.py") is None
    assert f("/usr/lib/python3.12/site-packages/flashinfer/jit/core.py") is None
    # a project's own package that happens to be called `re` is not the stdlib
    assert f("/home/u/.venv/lib/python3.12/site-packages/re/__init__.py") is None
    assert f("/home/u/proj/sglang/srt/foo.py") is None
    assert f(None).startswith("cannot determine source file")


# ---------------------------------------------------------------------------
# (b) against the installed torch
# ---------------------------------------------------------------------------

DECISION_KEYS = (
    "builtin_skiplist",
    "thirdparty_skiplist",
    "mod_inlinelist",
    "legacy_mod_inlinelist",
    "mod_skiplist",
    "force_skip_files",
    "in_graph_functions",
    "skip_functions",
    "manual_rules",
    "file_rules",
    "enable_trace_unittest",
)


def _base_version(v: str) -> str:
    return v.split("+", 1)[0]


@pytest.fixture(scope="module")
def live() -> TraceRules:
    if not HAS_TORCH:
        pytest.skip("torch not importable")
    clear_memo()
    rules = load_trace_rules(sys.executable, cache_dir=None)
    assert rules.origin == "installed", rules.source
    return rules


@pytest.fixture(scope="module")
def real_tr():
    if not HAS_TORCH:
        pytest.skip("torch not importable")
    import torch._dynamo.trace_rules as tr

    return tr


@needs_torch
def test_live_dump_matches_snapshot(live: TraceRules, snapshot: TraceRules):
    import torch

    assert live.torch_version == str(torch.__version__)
    assert live.source.startswith(f"torch {torch.__version__} installed at ")
    regen = f"regenerate: {sys.executable} {GEN_SCRIPT.relative_to(REPO)} --portable --out {SNAPSHOT_PATH.relative_to(REPO)}"
    assert _base_version(live.torch_version) == _base_version(snapshot.torch_version), regen
    for key in DECISION_KEYS:
        assert live.data.get(key) == snapshot.data.get(key), f"{key} drifted; {regen}"

    def shape(entries, with_env=False):
        # module/raw entries of SKIP_DIRS; installed third-party ones depend on the env
        return sorted(
            (e["kind"], e.get("rel") or e["raw"])
            for e in entries
            if with_env or e["kind"] != "thirdparty"
        )

    assert shape(live.data["skip_dirs"]) == shape([e for e in snapshot.data["skip_dirs"] if e["kind"] != "abs"]), regen
    assert [e["module"] for e in live.data["builtin_inline_when_called"]] == [
        e["module"] for e in snapshot.data["builtin_inline_when_called"]
    ]


def _py_files(root: Path, limit_per_dir: int | None = None) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", "site-packages", "dist-packages", "test", "tests"))
        py = sorted(f for f in filenames if f.endswith(".py"))
        out.extend(Path(dirpath) / f for f in py[:limit_per_dir])
    return out


def _sample_files() -> list[str]:
    import torch

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = _py_files(stdlib)
    files += _py_files(Path(torch.__file__).parent)
    for name in ("networkx", "hypothesis", "numpy", "tqdm", "libcst", "click", "pytest"):
        spec = importlib.util.find_spec(name)
        if spec and spec.origin:
            files += _py_files(Path(spec.origin).parent, limit_per_dir=3)
    files += [Path(__file__), Path(TR.__file__)]
    extra = ["<frozen importlib._bootstrap>", "<frozen abc>", "<string>"]
    return [str(f) for f in files] + extra


def _reason_kind(reason: str) -> str:
    # Dynamo walks its prefix *sets* in hash order, so when two prefixes match
    # (torch/_utils and torch/_utils_internal) the one it names varies by run.
    return reason.split(" (", 1)[0]


@needs_torch
@pytest.mark.parametrize("inlined", [True, False])
def test_file_skip_matches_check_file(live: TraceRules, snapshot: TraceRules, real_tr, inlined: bool):
    files = _sample_files()
    assert len(files) > 2000
    bad_live, bad_snap, bad_reason = [], [], []
    for f in files:
        real = real_tr.check_file(f, inlined)
        mine = live.check_file(f, inlined)
        if mine.skipped != real.skipped:
            bad_live.append((f, real.reason, mine.reason))
        elif _reason_kind(mine.reason) != _reason_kind(real.reason):
            bad_reason.append((f, real.reason, mine.reason))
        elif real.reason.startswith("file is under skip directory") and mine.reason != real.reason:
            bad_reason.append((f, real.reason, mine.reason))
        # the portable snapshot must agree on this machine's files too
        if (snapshot.file_skip_reason(f, inlined) is None) != (not real.skipped):
            bad_snap.append((f, real.reason, snapshot.check_file(f, inlined).reason))
    assert not bad_live, bad_live[:20]
    assert not bad_snap, bad_snap[:20]
    assert not bad_reason, bad_reason[:20]


def _module_of(path: str) -> str | None:
    import torch

    roots = [sysconfig.get_paths()["stdlib"], str(Path(torch.__file__).parent.parent)]
    for root in roots:
        root = root.rstrip("/") + "/"
        if path.startswith(root):
            rel = path[len(root) :]
            if "site-packages/" in rel or "-" in rel:
                return None
            rel = rel[: -len("/__init__.py")] if rel.endswith("/__init__.py") else rel[: -len(".py")]
            return rel.replace("/", ".")
    return None


@needs_torch
@pytest.mark.parametrize("inlined", [True, False])
def test_module_skip_matches_check_file(live: TraceRules, snapshot: TraceRules, real_tr, inlined: bool):
    bad = []
    n = 0
    for f in _sample_files():
        mod = _module_of(f)
        if not mod:
            continue
        n += 1
        real = real_tr.check_file(f, inlined).skipped
        for rules in (live, snapshot):
            got = rules.module_skip_reason(mod, is_inlined_call=inlined) is not None
            if got != real:
                bad.append((rules.origin, mod, real_tr.check_file(f, inlined).reason, rules.check_module(mod, inlined).reason))
    assert n > 2000
    assert not bad, bad[:20]


@needs_torch
def test_in_graph_names_resolve(live: TraceRules, real_tr):
    """The dumped names are the keys of get_torch_obj_rule_map (spot check)."""
    rule_map = real_tr.get_torch_obj_rule_map()
    for name in ("torch.cuda.get_device_capability", "torch.cuda.is_available", "torch.sin", "torch.compiler.is_compiling"):
        obj = real_tr.load_object(name)
        assert obj is not None
        assert rule_map[obj].__name__ == "TorchInGraphFunctionVariable"
        assert live.is_in_graph_function(name)
    seed = real_tr.load_object("torch.manual_seed")
    seed = seed if seed in rule_map else seed.__wrapped__  # the map keys unwrapped functions
    assert rule_map[seed].__name__ == "SkipFunctionVariable"
    assert live.is_skip_function("torch.manual_seed")


@needs_torch
def test_gen_script_stdout_matches_module():
    out = subprocess.run(
        [sys.executable, str(GEN_SCRIPT), "--portable"], capture_output=True, text=True, check=True, cwd="/"
    ).stdout
    data = json.loads(out)
    snap = json.loads(SNAPSHOT_PATH.read_text())
    if _base_version(data["torch_version"]) == _base_version(snap["torch_version"]):
        for key in DECISION_KEYS:
            assert data[key] == snap[key], key


# ---------------------------------------------------------------------------
# (c) the cache, the memo, broken environments
# ---------------------------------------------------------------------------


def _wrapper(tmp_path: Path, name: str, body: str) -> str:
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(0o755)
    return str(p)


class _Spy:
    """The interpreter processes the loading starts (every one goes through ``_start_python``)."""

    def __init__(self, monkeypatch):
        self.calls: list[str] = []
        real = TR._start_python

        def start(python, source):
            self.calls.append("dump" if source == DUMP_SOURCE else "probe" if source == PROBE_SOURCE else "other")
            return real(python, source)

        monkeypatch.setattr(TR, "_start_python", start)

    def count(self, kind: str) -> int:
        return self.calls.count(kind)


@needs_torch
def test_cache_second_load_runs_no_dump(tmp_path, monkeypatch):
    spy = _Spy(monkeypatch)
    first = load_trace_rules(cache_dir=tmp_path)
    assert first.origin == "installed", first.source
    assert spy.count("dump") == 1
    assert spy.count("probe") == 0  # this interpreter: probed in-process
    assert len(list(tmp_path.glob("trace_rules-*.json"))) == 1

    assert load_trace_rules(cache_dir=tmp_path) is first  # memo: free
    assert spy.calls == ["dump"]

    clear_memo()
    second = load_trace_rules(cache_dir=tmp_path)
    assert spy.calls == ["dump"], "warm cache must not run torch again"
    assert second.origin == "cache"
    assert "; cached)" in second.source
    assert second.data == first.data
    assert second.module_skip_reason("re") and second.is_in_graph_function("torch.cuda.get_device_capability")


@needs_torch
@pytest.mark.skipif(sys.platform == "win32", reason="sh wrappers")
def test_cache_other_interpreter_path_one_probe(tmp_path, monkeypatch):
    # another interpreter path (a wrapper around this one): probed by one tiny subprocess
    py = _wrapper(tmp_path, "python-wrapper", f'exec "{sys.executable}" "$@"')
    cache = tmp_path / "cache"
    spy = _Spy(monkeypatch)
    first = load_trace_rules(py, cache_dir=cache)
    assert first.origin == "installed", first.source
    assert spy.calls == ["probe", "dump"]
    clear_memo()
    second = load_trace_rules(py, cache_dir=cache)
    assert second.origin == "cache"
    assert spy.calls == ["probe", "dump", "probe"]
    assert second.in_graph_functions == first.in_graph_functions


@needs_torch
def test_stale_or_corrupt_cache_is_redumped(tmp_path, monkeypatch):
    spy = _Spy(monkeypatch)
    load_trace_rules(cache_dir=tmp_path)
    (cache_file,) = tmp_path.glob("trace_rules-*.json")
    cache_file.write_text("{not json")
    clear_memo()
    again = load_trace_rules(cache_dir=tmp_path)
    assert again.origin == "installed"
    assert spy.count("dump") == 2
    json.loads(cache_file.read_text())


@needs_torch
def test_rules_begun_are_the_rules_loaded(tmp_path):
    # a scan begins the dump first and reads the rules when its walks need them (engine._begin_trace_rules)
    pending = TR.begin_trace_rules(cache_dir=tmp_path)
    assert not pending.ready  # the interpreter is still dumping them
    rules = pending.result()
    assert rules.origin == "installed", rules.source
    assert pending.ready and pending.result() is rules
    assert load_trace_rules(cache_dir=tmp_path) is rules  # memoised as load_trace_rules's
    clear_memo()
    again = load_trace_rules(cache_dir=tmp_path)
    assert again.origin == "cache" and again.data == rules.data


@needs_torch
def test_a_dump_nobody_reads_is_stopped(tmp_path, monkeypatch):
    started = []
    real = TR._start_python

    def start(python, source):
        started.append(real(python, source))
        return started[-1]

    monkeypatch.setattr(TR, "_start_python", start)
    pending = TR.begin_trace_rules(cache_dir=tmp_path)
    assert not pending.ready and len(started) == 1
    pending.close()
    assert started[0].returncode is not None and started[0].returncode < 0  # killed, and reaped
    assert not list(tmp_path.glob("trace_rules-*.json"))  # nothing cached of a dump never read
    pending.close()  # (twice: nothing left to stop)


def test_cache_key_depends_on_torch_identity(tmp_path):
    probe = {"torch_dir": "/a/torch", "torch_version": "2.13.0", "trace_rules_mtime": 1.0}
    k = TR._cache_file(tmp_path, "/usr/bin/python3", probe)
    assert k == TR._cache_file(tmp_path, "/usr/bin/python3", dict(probe))
    assert k != TR._cache_file(tmp_path, "/usr/bin/python3", dict(probe, trace_rules_mtime=2.0))
    assert k != TR._cache_file(tmp_path, "/usr/bin/python3", dict(probe, torch_version="2.14.0"))
    assert k != TR._cache_file(tmp_path, "/other/python", probe)


def test_missing_interpreter_degrades(tmp_path):
    r = load_trace_rules(str(tmp_path / "nope" / "python"), cache_dir=tmp_path)
    assert r.origin == "snapshot"
    assert "not found" in r.source
    assert r.module_skip_reason("re")


@pytest.mark.skipif(sys.platform == "win32", reason="sh wrappers")
def test_interpreter_without_torch_degrades(tmp_path):
    # -S: no site-packages, so no torch
    py = _wrapper(tmp_path, "python-nosite", f'exec "{sys.executable}" -S "$@"')
    r = load_trace_rules(py, cache_dir=tmp_path / "c")
    assert r.origin == "snapshot"
    assert f"torch not importable by {py}" in r.source
    assert r.is_in_graph_function("torch.cuda.get_device_capability")


@pytest.mark.skipif(sys.platform == "win32", reason="sh wrappers")
def test_broken_torch_degrades(tmp_path):
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('broken build')\n")
    (fake / "version.py").write_text("__version__ = '9.9.9'\n")
    py = _wrapper(tmp_path, "python-broken", f'PYTHONPATH="{fake.parent}" exec "{sys.executable}" -S "$@"')
    r = load_trace_rules(py, cache_dir=tmp_path / "c")
    assert r.origin == "snapshot"
    assert "9.9.9" in r.source and "failed" in r.source and "broken build" in r.source
    assert not list((tmp_path / "c").glob("*.json")) if (tmp_path / "c").exists() else True


@pytest.mark.skipif(sys.platform == "win32", reason="sh wrappers")
def test_hanging_interpreter_degrades(tmp_path, monkeypatch):
    monkeypatch.setattr(TR, "PROBE_TIMEOUT_S", 1.0)
    py = _wrapper(tmp_path, "python-hang", "exec sleep 30")
    r = load_trace_rules(py)
    assert r.origin == "snapshot"
    assert "did not answer" in r.source


def test_dump_source_is_self_contained():
    compile(DUMP_SOURCE, "<dump>", "exec")
    compile(PROBE_SOURCE, "<probe>", "exec")
    top_imports = re.findall(r"^(?:import|from) (\S+)", DUMP_SOURCE, re.M)
    assert top_imports == ["sys"]  # the rest is imported after '' is dropped from sys.path
    assert TR.JSON_MARKER in DUMP_SOURCE and TR.JSON_MARKER in PROBE_SOURCE


def test_dump_ignores_cwd_shadowing(tmp_path):
    """A stray logging.py in the cwd (e.g. the scanned project) must not break the dump."""
    if not HAS_TORCH:
        pytest.skip("torch not importable")
    (tmp_path / "logging.py").write_text("raise RuntimeError('shadowed')\n")
    proc = subprocess.run(
        [sys.executable, "-c", DUMP_SOURCE], capture_output=True, text=True, cwd=tmp_path, timeout=180
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = TR._parse_marked(proc.stdout)
    assert "torch.cuda.get_device_capability" in data["in_graph_functions"]
