"""The real-code suite's fast part (issue [A]): stored truth re-measured on the installed torch, and the static
side held to the figures recorded in tests/realcode/baseline.json.  `python bench/realcode.py` runs it all."""
import json
from pathlib import Path

import pytest

from realcode import compare, truth
from realcode.catalog import CASES, ModelCase, Variant
from realcode.env import EnvUnavailable, cache_root, env_root

pytestmark = pytest.mark.realcode

BASELINE = Path(__file__).parent / "realcode" / "baseline.json"
FAST = [c for c in CASES if c.fast]
# the variants re-measured in CI besides the defaults: one host-side stop in each library
ORACLE_VARIANTS = "train_gc_cache,txt_ids_3d"


@pytest.fixture(scope="module")
def env():
    try:
        return env_root()
    except EnvUnavailable as e:
        pytest.skip(f"the pinned transformers/diffusers environment is not available: {e}")


def test_catalog_covers_the_families_the_issue_names():
    assert len(CASES) >= 40
    assert len({c.name for c in CASES}) == len(CASES)
    families = {c.family for c in CASES}
    assert {"decoder", "moe", "encoder", "encoder-decoder", "vision", "unet", "dit", "vae"} <= families
    assert {c.library for c in CASES} == {"transformers", "diffusers"}


def test_stored_truth_has_a_row_for_every_model_and_variant():
    stored = truth.load()
    for case in CASES:
        rows = {r["variant"]: r for r in stored.get(case.name, [])}
        assert set(rows) == {v.name for v in case.all_variants()}, case.name
        for r in rows.values():  # measured, or the row says why not
            assert ("fullgraph" in r and "traced" in r) or r.get("error"), (case.name, r["variant"])
    measured = [c for c in CASES if "error" not in stored[c.name][0]]
    assert len(measured) >= 40, "fewer than 40 models measured"


def test_truth_is_the_installed_torchs(env):
    """Re-measure the CI sample in fresh processes: Dynamo's outcome, stop line and traced functions must be the
    stored ones, or the stored truth has drifted from the torch that CI installs."""
    torch = pytest.importorskip("torch")
    stored = truth.load()
    if torch.__version__.split("+")[0] != stored["_meta"]["torch"].split("+")[0]:
        pytest.skip(f"stored truth is for torch {stored['_meta']['torch']}, installed {torch.__version__}")
    fresh = truth.measure([c.name for c in FAST], jobs=2, variants=ORACLE_VARIANTS, quiet=True)
    wanted = set(ORACLE_VARIANTS.split(","))
    assert len(fresh["rows"]) == sum(1 + sum(v.name in wanted for v in c.variants) for c in FAST)
    drift = []
    for row in fresh["rows"]:
        old = next(r for r in stored[row["case"]] if r["variant"] == row["variant"])
        for key in ("error", "fullgraph"):
            a, b = old.get(key), row.get(key)
            if key == "fullgraph" and a and b:
                a, b = {k: a.get(k) for k in ("outcome", "gb", "stop")}, {k: b.get(k) for k in ("outcome", "gb", "stop")}
            if a != b:
                drift.append(f"{row['case']}/{row['variant']} {key}: stored {a}, measured {b}")
        if sorted(map(tuple, old.get("traced", []))) != sorted(map(tuple, row.get("traced", []))):
            drift.append(f"{row['case']}/{row['variant']}: traced functions differ")
    assert not drift, "\n".join(drift)


def test_static_side_holds_the_recorded_figures(env):
    """compile-lint on the CI sample may only get better than the recorded figures (bench/realcode.py
    --record-baseline after an improvement)."""
    from realcode.static import analyse

    baseline = json.loads(BASELINE.read_text())
    assert baseline["cases"] == [c.name for c in FAST], "the CI sample changed: re-record the baseline"
    stored = truth.load()
    static = analyse(FAST, env, cache_dir=cache_root() / "realcode" / "lint-cache")
    scores = [compare.score_case(c, stored[c.name], static[c.name]) for c in FAST]
    t = compare.totals(scores)
    was = baseline["figures"]
    report = compare.table(scores) + "\n" + compare.details(scores)
    assert t.errors - t.true_errors <= was["errors"] - was["true_errors"], "more false errors:\n" + report
    assert t.stop_hits >= was["stop_hits"], "fewer measured stops reported:\n" + report
    assert t.reached_traced >= was["reached_traced"], "the walk reaches fewer traced functions:\n" + report
    assert t.traced == was["traced"], "the stored truth changed: re-record the baseline"


# --------------------------------------------------------------------------- the comparison itself
def _case():
    return ModelCase("m", "decoder", "pkg.mod:M", None, {}, "tokens", (Variant("v", "another branch"),))


def _row(variant, stop=None, stack=(), traced=(), executed=()):
    fg = {"outcome": "compiles"} if stop is None else {
        "outcome": "stops", "gb": "GB0007", "message": "skipped", "stop": {"path": stop[0], "line": stop[1],
                                                                           "function": "f"},
        "stack": [list(s) for s in stack]}
    return {"case": "m", "variant": variant, "fullgraph": fg, "traced": [list(t) for t in traced],
            "executed": [list(t) for t in executed], "callers": []}


def _finding(sev, path, line):
    return {"rule": "CL109", "severity": sev, "path": path, "line": line, "callee": "warnings.warn", "trace": []}


def test_score_counts_errors_on_stop_lines_and_their_stacks_as_true():
    rows = [_row("default"), _row("v", stop=("pkg/a.py", 10), stack=[("pkg/mod.py", 3), ("pkg/a.py", 10)])]
    static = {"findings": [_finding("error", "pkg/a.py", 10), _finding("error", "pkg/mod.py", 3),
                           _finding("error", "pkg/b.py", 5), _finding("warning", "pkg/b.py", 6)], "reached": set()}
    s = compare.score_case(_case(), rows, static)
    assert (s.errors, s.true_errors, s.warnings) == (3, 2, 1)
    assert s.false_errors == ["pkg/b.py:5 CL109 warnings.warn"]
    assert [st.where for st in s.stops] == ["pkg/a.py:10"] and s.stop_hits == 1


def test_score_wants_an_error_where_the_default_inputs_stop():
    rows = [_row("default", stop=("pkg/a.py", 10)), _row("v", stop=("pkg/b.py", 4))]
    static = {"findings": [_finding("warning", "pkg/a.py", 10), _finding("warning", "pkg/b.py", 4)], "reached": set()}
    s = compare.score_case(_case(), rows, static)
    hits = {st.where: st.hit for st in s.stops}
    assert hits == {"pkg/a.py:10": False, "pkg/b.py:4": True}


def test_score_reach_recall_over_what_dynamo_traced():
    traced = [("pkg/mod.py", 1, "M.forward"), ("pkg/mod.py", 9, "Block.forward"), ("pkg/__init__.py", 2, "helper")]
    rows = [_row("default", traced=traced, executed=traced + [("pkg/mod.py", 20, "eager_only")])]
    static = {"findings": [], "reached": {("pkg.mod", "M.forward"), ("pkg", "helper"), ("pkg.mod", "never_ran")}}
    s = compare.score_case(_case(), rows, static)
    assert (s.traced, s.reached_traced, s.over_reach) == (3, 2, 1)
    assert s.reach_misses == ["pkg.mod:Block.forward"]


def test_a_model_that_could_not_be_built_is_a_skip_with_its_reason():
    s = compare.score_case(_case(), [{"case": "m", "variant": "default", "error": "build: TypeError: x"}], {})
    assert s.skipped == "build: TypeError: x"
    assert "skipped: build: TypeError: x" in compare.table([s])


# --------------------------------------------------------------------------- [B] on the real code where it was met
def test_transformers_guards_are_decided_on_llama(env):
    """transformers 5.24: `deprecate_kwarg`'s `warnings.warn` (utils/deprecation.py:171) runs only when
    `not is_torchdynamo_compiling()`, whose body is `try: return torch.compiler.is_compiling()`: dead under
    Dynamo.  The dynamic-rope `logger.warning` (modeling_rope_utils.py:821) needs a "dynamic" rope type: a
    warning that says so, not an error (Dynamo compiles LlamaModel with the default config)."""
    from realcode.catalog import BY_NAME
    from realcode.static import analyse

    static = analyse([BY_NAME["llama"]], env, cache_dir=cache_root() / "realcode" / "lint-cache")
    at = {(f["path"], f["line"]): f for f in static["llama"]["findings"]}
    assert ("transformers/utils/deprecation.py", 171) not in at
    rope = at[("transformers/modeling_rope_utils.py", 821)]
    assert rope["severity"] == "warning" and any("dynamic" in c for c in rope["conditions"])
    assert not [f for f in static["llama"]["findings"] if f["severity"] == "error"]


def test_decoration_time_code_is_not_walked_on_opt(env):
    """transformers 5.24: `@auto_docstring` on OPT's forwards rewrites their docstrings at import
    (get_model_name -> inspect.getsourcefile, utils/auto_docstring.py:3080); 0.1 walked it as if each call ran
    it and reported 14 errors on OPTModel, which Dynamo compiles."""
    from realcode.catalog import BY_NAME
    from realcode.static import analyse

    static = analyse([BY_NAME["opt"]], env, cache_dir=cache_root() / "realcode" / "lint-cache")
    assert not [f for f in static["opt"]["findings"] if f["path"] == "transformers/utils/auto_docstring.py"]


def test_in_memory_output_redirection_on_transformers(env):
    """Issue [D]'s family on the code where it was met: transformers 5.24.0's model debugger turns a tensor into
    text with `with StringIO() as buf, redirect_stdout(buf): print(value)` (model_debugging_utils.py,
    `_repr_to_list`).  Both are measured to stop Dynamo on torch 2.13 (io.StringIO GB0156, redirect_stdout
    GB0262): CL118 errors when the function is compiled."""
    from compile_lint.engine import ScanOptions, scan

    empty = cache_root() / "realcode" / "empty-scan-root"
    empty.mkdir(parents=True, exist_ok=True)
    result = scan(ScanOptions(paths=[empty], search_path=[env], use_environment=False, cache_dir=None,
                              entries=["transformers.model_debugging_utils:_repr_to_list"], torch_version="2.13"))
    got = {(f.rule, f.line, f.severity) for f in result.findings if Path(f.path).name == "model_debugging_utils.py"}
    line = next(i for i, text in enumerate((env / "transformers" / "model_debugging_utils.py").read_text()
                                           .splitlines(), 1) if "redirect_stdout(buf)" in text)
    # one report per rule and line: the StringIO() and the redirect_stdout(buf) of the same `with`
    assert ("CL118", line, "error") in got, got
    assert ("CL108", line + 1, "error") in got, got  # the print() whose output it captures
