"""The Dynamo model is measured, not written by hand.

- The bundled verdict table (compile_lint/dynamo/data/verdicts-torch-*.json) is re-measured on the installed
  torch when it is the table's version (``oracle``): each probe of compile_lint/dynamo/probes.py in a fresh
  forked process, under ``torch.compile(fullgraph=True, backend="eager")``.
- Every callee a rule names has a measured verdict; every probed callee that stops Dynamo is either named by
  a rule or a listed known gap.
- The rules follow the table: a callee measured to compile is not a break (``re.findall`` on torch 2.13); one
  measured to stop Dynamo is reported with the measured GB id, whatever the rule's own text says.
"""
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from compile_lint.dynamo import probes
from compile_lint.dynamo.verdicts import Verdict, VerdictTable, bundled_tables, choose, load_verdicts
from compile_lint.rules import ALL_RULES, rule_for_call

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "measure_dynamo_verdicts.py"
NEWEST = load_verdicts(None)


def _measure(names, tmp_path) -> dict:
    """Run the measuring script in a fresh interpreter: the forked children must start from a clean parent (this
    pytest process has used tempfile, logging, threads..., and a probe of tempfile.mkdtemp finds what it left)."""
    out = tmp_path / "verdicts.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), "--jobs", str(max(2, os.cpu_count() or 2)),
                           "--only", *names], capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())["verdicts"]


def _comparable(v: dict) -> tuple:
    """What must not drift: the outcome, the exception class, the GB id, and whether a value is baked."""
    return v.get("outcome"), v.get("exception"), v.get("gb"), v.get("baked")


# ------------------------------------------------------------------ the oracle: re-measure on the installed torch
@pytest.mark.oracle
def test_bundled_table_matches_the_installed_torch(capsys, tmp_path):
    torch = pytest.importorskip("torch")
    tables = bundled_tables()
    if torch.__version__ not in tables:
        pytest.skip(f"no table measured on torch {torch.__version__} (bundled: {sorted(tables)}); measure one "
                    f"with {SCRIPT.name}")
    bundled = json.loads(tables[torch.__version__].read_text())["verdicts"]
    assert sorted(bundled) == sorted(probes.PROBES), "the table and the probes disagree on which callees exist"
    names = sorted(probes.PROBES)
    every = int(os.environ.get("COMPILE_LINT_VERDICT_SAMPLE", "1") or 1)  # a slow machine: every Nth probe
    names = names[::max(1, every)]
    t0 = time.monotonic()
    fresh = _measure(names, tmp_path)
    elapsed = time.monotonic() - t0
    with capsys.disabled():
        print(f"\nverdicts: {len(fresh)} of {len(probes.PROBES)} probes re-measured on torch {torch.__version__} "
              f"in {elapsed:.1f}s")
    differ = [f"{name}: bundled {_comparable(bundled[name])}, measured {_comparable(v)}"
              for name, v in fresh.items() if _comparable(v) != _comparable(bundled[name])]
    assert not differ, "verdicts differ from the bundled table (re-measure it):\n" + "\n".join(differ)


@pytest.mark.oracle
def test_a_probe_measures_what_dynamo_does(tmp_path):
    """The runner itself: a known stop, a known compile, a baked environment read, a guarded one."""
    pytest.importorskip("torch")
    got = _measure(["subprocess.run", "re.findall", "os.getenv", "os.environ.get@present", "tempfile.mkdtemp"],
                   tmp_path)
    assert got["subprocess.run"]["outcome"] == "unsupported" and got["subprocess.run"]["gb"] == "GB0007"
    assert got["subprocess.run"]["exception"] == "torch._dynamo.exc.Unsupported"
    assert got["re.findall"] == {"outcome": "compiles"}
    assert got["os.getenv"]["baked"] is True
    assert got["os.environ.get@present"]["baked"] is False and got["os.environ.get@present"]["guarded"] is True
    # as in a fresh process (the corpus's c045): tempfile's name sequence is first made under a lock
    assert got["tempfile.mkdtemp"]["gb"] == "GB0156"


# ------------------------------------------------------------------ coverage: every callee the model names is measured
def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def test_every_callee_a_rule_names_has_a_measured_verdict():
    assert NEWEST is not None, "no verdict table bundled"
    missing, unexcused = [], []
    for rule in ALL_RULES.values():
        for name in rule.measured_callees():
            v = NEWEST.get(name)
            probe = probes.PROBES.get(name)
            if v is None or probe is None:
                missing.append(f"{rule.code} {name}")
            elif v.outcome == "not-installed" and _importable(probe.requires):
                unexcused.append(f"{rule.code} {name}: {probe.requires} is importable here, measure it")
            elif v.outcome == "not-available" and sys.version_info[:2] >= tuple(probe.min_python)[:2]:
                unexcused.append(f"{rule.code} {name}: this Python has it, measure it")
            elif v.outcome in ("timeout", "crashed", "probe-failed"):
                unexcused.append(f"{rule.code} {name}: {v.outcome}")
    assert not missing, "callees with no probe or no measured verdict:\n" + "\n".join(missing)
    assert not unexcused, "\n".join(unexcused)


def test_every_method_shape_is_measured_through_a_probe():
    missing = [f"{r.code} *.{name}" for r in ALL_RULES.values() for name, _ in r.shapes
               if name not in probes.UNPROBED_SHAPES and NEWEST.get(f"pathlib.Path.{name}") is None]
    assert not missing


def _probe_module(probe) -> str:
    """A scannable module from a probe: its setup at module level, its call in a compiled function."""
    body = probe.body or f"_ = ({probe.call})"
    return ("import os, sys, torch\nTMP = '/tmp'\n" + probe.setup + "\n\ndef f(x):\n" +
            textwrap.indent(body, "    ") + "\n    return x + 1\n\nf_c = torch.compile(f, fullgraph=True)\n")


def test_what_stops_dynamo_is_reported_or_a_known_gap(tmp_path):
    """Every probed call measured to stop Dynamo that no rule names (nor a skipped module covers) is reported
    when its probe's own code is scanned (CL118, from the table alone), except the listed gaps, which really
    are not: the model's safe list is measured too."""
    from compile_lint.dynamo.model import OPAQUE_PACKAGES  # torch.*: never reported as a skipped module
    from compile_lint.dynamo.trace_rules import load_snapshot
    from compile_lint.engine import ScanOptions, scan
    from compile_lint.reach import module_of

    skipped = load_snapshot()  # calls into a module Dynamo skips are CL117 (linecache.getline)
    named = {n for r in ALL_RULES.values() for n in r.measured_callees()}
    stops_unnamed = sorted(name for name, v in NEWEST.verdicts.items()
                           if v.stops and name not in named and rule_for_call(name.split("@")[0]) is None
                           and (name.split(".")[0] in OPAQUE_PACKAGES
                                or not skipped.module_skip_reason(module_of(name))))
    assert len(stops_unnamed) >= 20  # json.dumps, copy.copy, dataclasses.fields, io.StringIO, ...
    reported = set()
    for i, name in enumerate(stops_unnamed):
        path = tmp_path / f"p{i}.py"
        path.write_text(_probe_module(probes.PROBES[name.split("@")[0]]))
        found = scan(ScanOptions(paths=[path], use_environment=False, cache_dir=None)).findings
        if any(f.callee == name and f.severity == "error" for f in found):
            reported.add(name)
    assert set(stops_unnamed) - reported - probes.KNOWN_GAPS == set(), "these stop Dynamo and are not reported"
    assert probes.KNOWN_GAPS - (set(stops_unnamed) - reported) == set(), "listed as gaps, but reported or compile"


def test_the_model_s_constant_folds_are_measured_to_compile():
    from compile_lint.dynamo.model import CONSTANT_FOLDED

    assert [n for n in sorted(CONSTANT_FOLDED) if not NEWEST.compiles(n)] == []


# ------------------------------------------------------------------ loading: which table for which torch
def test_the_table_is_chosen_by_torch_version():
    avail = ["2.13.0+cpu", "2.9.1"]
    assert choose("2.13.0+cpu", avail) == ("2.13.0+cpu", True)
    assert choose("2.13.0+cu130", avail) == ("2.13.0+cpu", True)  # same release, other local tag
    assert choose("2.12.0", avail) == ("2.13.0+cpu", False)
    assert choose("2.11.0+cu130", avail) == ("2.13.0+cpu", False)  # as far from 2.9.1 as from 2.13: the newer
    assert choose("2.10.0", avail) == ("2.9.1", False)
    assert choose(None, avail) == ("2.13.0+cpu", False)
    assert choose("2.13.0", []) == (None, False)


def test_a_scan_header_says_which_table_it_used():
    from compile_lint.dynamo.trace_rules import _with_verdict_source, load_snapshot

    rules = _with_verdict_source(load_snapshot())
    assert f"Dynamo verdicts measured on torch {rules.torch_version}" in rules.source
    other = load_verdicts("2.12.1")
    assert not other.exact and "nearest to torch 2.12.1" in other.source and "re-measure" in other.source
    assert load_verdicts("2.11.0+cu130").exact  # measured on the H200's torch (scripts/measure_dynamo_verdicts.py)


def test_a_pattern_s_representative_covers_its_members_but_never_clears_them():
    t = VerdictTable("x", "y", "z", {"random.*": Verdict("unsupported", gb="GB0007"), "random.randint":
                                     Verdict("compiles")})
    assert t.lookup("random.gauss").gb == "GB0007" and not t.compiles("random.gauss")
    assert t.compiles("random.randint") and t.lookup("random.randint").compiles


# ------------------------------------------------------------------ the rules follow the table
def _scan(tmp_path, src: str):
    from compile_lint.engine import ScanOptions, scan

    (tmp_path / "m.py").write_text(textwrap.dedent(src))
    return scan(ScanOptions(paths=[tmp_path], use_environment=False, cache_dir=None)).findings


RE_ON_A_RUNTIME_STRING = '''
import json, re, torch
def f(x):
    if re.match(r"fp(\\d+)", json.dumps({"dtype": "fp8"})):  # an argument the analyzer cannot take for a constant
        return x * 2
    return x
f_c = torch.compile(f, fullgraph=True)
'''


def test_a_call_measured_to_compile_is_not_a_break(tmp_path):
    assert NEWEST.compiles("re.match") and NEWEST.stops("json.dumps")
    found = [(f.rule, f.callee, f.dynamo) for f in _scan(tmp_path, RE_ON_A_RUNTIME_STRING) if f.severity != "note"]
    # re.match is not reported; json.dumps is, by the measured table alone (CL118)
    assert found == [("CL118", "json.dumps", "Unsupported (GB0156): Unsupported method call")]


def test_a_call_measured_to_stop_dynamo_is_reported_with_the_measured_outcome(tmp_path, monkeypatch):
    """Give the scan a table in which re.match stops Dynamo (as re.findall does on torch 2.11): CL117 is back,
    and a sink's outcome carries the measured GB id instead of the rule's."""
    import compile_lint.reach as reach

    table = VerdictTable("2.11.0", "3.11", "today", {
        "re.match": Verdict("unsupported", "torch._dynamo.exc.Unsupported", "Attempted to call function marked "
                            "as skipped", "GB0007"),
        "time.time": Verdict("unsupported", "torch._dynamo.exc.Unsupported", "Made-up message", "GB9999"),
    })
    monkeypatch.setattr(reach, "load_verdicts", lambda version=None: table)
    found = _scan(tmp_path, RE_ON_A_RUNTIME_STRING)
    assert [f.rule for f in found if f.severity == "error"] == ["CL117"]
    (tmp_path / "m.py").unlink()
    clock = _scan(tmp_path, '''
import time, torch
def f(x):
    return x + time.time()
f_c = torch.compile(f, fullgraph=True)
''')
    assert [(f.rule, f.dynamo) for f in clock] == [("CL106", "Unsupported (GB9999): Made-up message")]


RE_ON_CONSTANTS = '''
import importlib.util, re, torch
def f(x):
    fp8 = re.search("fp8", "nvfp4_fp8")
    spec = importlib.util.find_spec("json")
    return x * 2 if fp8 and spec else x
f_c = torch.compile(f, fullgraph=True)
'''


def test_constant_folding_is_what_the_torch_in_use_measures(tmp_path, monkeypatch):
    """Torch 2.13 folds re.search and find_spec on constant arguments; torch 2.11 (measured on the H200) stops
    at both: the same code is clean for one and two errors for the other."""
    import compile_lint.reach as reach

    assert [f for f in _scan(tmp_path, RE_ON_CONSTANTS) if f.severity != "note"] == []
    old = load_verdicts("2.11.0+cu130")
    assert old.stops("re.search") and old.stops("importlib.util.find_spec")
    monkeypatch.setattr(reach, "load_verdicts", lambda version=None: old)
    (tmp_path / "m.py").unlink()
    found = sorted((f.rule, f.callee, f.severity) for f in _scan(tmp_path, RE_ON_CONSTANTS))
    assert found == [("CL117", "importlib.util.find_spec", "error"), ("CL117", "re.search", "error")], found


def test_a_silent_rule_whose_call_stops_dynamo_is_an_error(tmp_path):
    """platform.platform() is listed with the silent platform probes, but torch 2.13 stops at it."""
    assert NEWEST.stops("platform.platform") and not NEWEST.stops("platform.system")
    found = _scan(tmp_path, '''
import platform, torch
def f(x):
    a = platform.platform()
    b = platform.system()
    return x * (2 if a and b else 1)
f_c = torch.compile(f, fullgraph=True)
''')
    assert sorted((f.line, f.rule, f.severity) for f in found) == [(4, "CL203", "error"), (5, "CL203", "warning")]
    assert "GB0088" in next(f.dynamo for f in found if f.line == 4)


def test_env_reads_stay_silent_and_are_measured_baked():
    for name in ("os.getenv", "os.getenv@present", "os.environ.get", "os.environ.__contains__"):
        v = NEWEST.get(name)
        assert v.compiles and v.baked is True, name
    assert NEWEST.get("os.environ.get@present").baked is False  # guarded: it recompiles
    assert ALL_RULES["CL201"].kind == "silent"
