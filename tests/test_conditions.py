"""Issue [B]: every finding says when it happens; only a hazard met on every trace of a fullgraph region is an
error.  A hazard behind a branch the walk cannot decide is a warning that names the branch."""
import json
import textwrap

from compile_lint.report import to_json, to_text


def _scan(run_scan, tmp_path, source: str, **kw):
    (tmp_path / "m.py").write_text(textwrap.dedent(source))
    return run_scan(tmp_path / "m.py", **kw)


def _by_line(result):
    return {f.line: f for f in result.findings if f.severity != "note"}


def test_undecided_branch_makes_a_warning_that_names_it(run_scan, tmp_path):
    result = _scan(run_scan, tmp_path, '''
        import os, subprocess, torch

        def f(x, cfg):
            if cfg.rope_type == "dynamic":
                subprocess.run(["true"])
            os.system("true")
            return x

        f_c = torch.compile(f, fullgraph=True)
        ''')
    got = _by_line(result)
    assert got[6].severity == "warning" and [c.text for c in got[6].conditions] == ["cfg.rope_type == 'dynamic'"]
    assert got[6].conditions[0].line == 5
    assert got[7].severity == "error" and got[7].certain
    doc = json.loads(to_json(result))
    by = {f["line"]: f for f in doc["findings"]}
    assert by[6]["certain"] is False and by[6]["conditions"][0]["text"] == "cfg.rope_type == 'dynamic'"
    assert by[7]["certain"] is True and by[7]["conditions"] == []
    text = to_text(result)
    assert "only if: cfg.rope_type == 'dynamic'  (m.py:5)" in text
    assert "dynamo: may stop: Unsupported" in text
    assert result.stats["findings_conditional"] == 1 and result.stats["findings_certain"] >= 1


def test_the_else_branch_names_the_negated_condition(run_scan, tmp_path):
    result = _scan(run_scan, tmp_path, '''
        import subprocess, torch

        def f(x, merged):
            if merged is None:
                pass
            else:
                subprocess.run(["true"])
            return x

        f_c = torch.compile(f, fullgraph=True)
        ''')
    (f,) = [f for f in result.findings if f.severity != "note"]
    assert f.severity == "warning" and f.conditions[0].text == "merged is not None"


def test_an_except_handler_is_a_condition(run_scan, tmp_path):
    result = _scan(run_scan, tmp_path, '''
        import warnings, torch

        def f(x):
            try:
                y = x + 1
            except Exception:
                warnings.warn("fallback")
                y = x
            return y

        f_c = torch.compile(f, fullgraph=True)
        ''')
    (f,) = [f for f in result.findings if f.severity != "note"]
    assert f.severity == "warning" and f.conditions[0].text == "the try body raises"


def test_a_hazard_reached_on_both_branches_is_certain(run_scan, tmp_path):
    result = _scan(run_scan, tmp_path, '''
        import os, torch

        def load(p):
            return os.path.exists(p)

        def f(x, aot):
            if aot:
                load("a")
            else:
                load("b")
            return x

        f_c = torch.compile(f, fullgraph=True)
        ''')
    (f,) = [f for f in result.findings if f.severity != "note"]
    assert f.line == 5 and f.severity == "error" and f.certain


def test_a_certain_path_beats_a_shorter_conditional_one(run_scan, tmp_path):
    result = _scan(run_scan, tmp_path, '''
        import os, torch

        def probe():
            return os.path.exists("/x")

        def middle():
            return probe()

        def f(x, flag):
            if flag:
                probe()
            middle()
            return x

        f_c = torch.compile(f, fullgraph=True)
        ''')
    (f,) = [f for f in result.findings if f.severity != "note"]
    assert f.severity == "error" and f.certain
    assert [fr.qualname for fr in f.trace] == ["f", "middle", "probe"]


def test_a_guard_helper_returning_is_compiling_in_a_try_is_decided(run_scan, tmp_path):
    """transformers' is_torchdynamo_compiling(): `try: return torch.compiler.is_compiling()` with
    `except Exception: return False` is True while Dynamo traces."""
    result = _scan(run_scan, tmp_path, '''
        import warnings, torch

        def is_torchdynamo_compiling():
            try:
                import torch
                return torch.compiler.is_compiling()
            except Exception:
                return False

        def f(x):
            if not is_torchdynamo_compiling():
                warnings.warn("eager only")
            return x

        f_c = torch.compile(f, fullgraph=True)
        ''')
    assert [f for f in result.findings if f.severity != "note"] == []


def test_a_bare_constant_returned_after_an_import_is_not_decided(run_scan, tmp_path):
    result = _scan(run_scan, tmp_path, '''
        import warnings, torch

        def has_flash():
            try:
                import flash_attn
                return True
            except ImportError:
                return False

        def f(x):
            if not has_flash():
                warnings.warn("no flash")
            return x

        f_c = torch.compile(f, fullgraph=True)
        ''')
    (f,) = [f for f in result.findings if f.severity != "note"]
    assert f.severity == "warning" and f.conditions[0].text == "not has_flash()"


def test_membership_in_a_dict_literal_is_decided(run_scan, tmp_path):
    result = _scan(run_scan, tmp_path, '''
        import os, torch

        def get(backend="100"):
            table = {"100": 1, "90": 2}
            if backend not in table:
                raise ValueError(backend)
            return os.path.exists("/x")

        def f(x):
            get()
            return x

        f_c = torch.compile(f, fullgraph=True)
        ''')
    (f,) = [f for f in result.findings if f.severity != "note"]
    assert f.severity == "error" and f.certain


def test_jit_scripting_and_tracing_are_false_under_dynamo(run_scan, tmp_path):
    result = _scan(run_scan, tmp_path, '''
        import torch

        def f(x):
            if torch.jit.is_scripting() or torch.jit.is_tracing():
                print("never while compiling")
            return x

        f_c = torch.compile(f, fullgraph=True)
        ''')
    assert [f for f in result.findings if f.severity != "note"] == []


def test_a_region_that_may_graph_break_keeps_warnings(run_scan, tmp_path):
    result = _scan(run_scan, tmp_path, '''
        import os, torch

        def f(x):
            os.system("true")
            return x

        f_c = torch.compile(f)
        ''')
    (f,) = [f for f in result.findings if f.severity != "note"]
    assert f.severity == "warning" and f.certain


def test_what_a_decorator_does_when_applied_is_not_walked(run_scan, tmp_path):
    """transformers' `@auto_docstring` (with or without arguments) rewrites the docstring while the class is
    defined, at import (reading the source with inspect.getsourcefile); calling the decorated forward runs only
    the forward.  A real wrapper (functools.wraps style) runs at every call, and is walked."""
    result = _scan(run_scan, tmp_path, '''
        import functools, logging, torch

        logger = logging.getLogger(__name__)

        def auto_docstring(obj=None, *, intro=None):
            def decorator(obj):
                print("documenting", obj.__qualname__)
                return obj
            if obj:
                return decorator(obj)
            return decorator

        def logged(func):
            @functools.wraps(func)
            def wrapper(*args, **kwargs):
                logger.warning("called")
                return func(*args, **kwargs)
            return wrapper

        class M(torch.nn.Module):
            @auto_docstring(intro="x")
            def forward(self, x):
                return self.outer(x)

            @auto_docstring
            def outer(self, x):
                return self.inner(x)

            @auto_docstring(intro="y")
            @logged
            def inner(self, x):
                return x

        m = torch.compile(M(), fullgraph=True)
        ''')
    loud = {(f.line, f.callee) for f in result.findings if f.severity != "note"}
    assert loud == {(17, "logging.Logger.warning")}


def test_a_validation_that_raises_is_assumed_to_pass(run_scan, tmp_path):
    """flashinfer 0.6.3's get_fp4_quantization_module: `if backend not in backend_modules: raise
    ValueError(...)` with a backend the walk cannot know; what follows runs on every call that does not fail.
    An empty-batch fast path (`if x.shape[0] == 0: return x`) is assumed not taken."""
    result = _scan(run_scan, tmp_path, '''
        import os, torch

        def load(backend):
            if backend not in ("90", "100"):
                raise ValueError(backend)
            return os.path.exists("/jit/" + backend)

        def f(x, backend):
            if x.shape[0] == 0:
                return x
            load(backend)
            return x

        f_c = torch.compile(f, fullgraph=True)
        ''')
    (f,) = [f for f in result.findings if f.severity != "note"]
    assert f.severity == "error" and f.certain



ALTERNATIVES = '''
import os, subprocess, torch

def probe():
    return subprocess.check_output(["nvcc", "--version"])

class A:
    def run(self, x):
        probe()
        return x

class B:
    def run(self, x):
        {b_body}
        return x + 1

class C:
    def run(self, x):
        return x + 2

def pick(flag):
    return A() if flag == "a" else B() if flag == "b" else {last}()

def f(x):
    m = pick(os.environ.get("KIND"))
    return m.run(x)

def g(x):
    for m in [A(), C()]:  # a loop calls every element: no alternative
        x = m.run(x)
    return x

compiled = torch.compile({region}, fullgraph=True)
'''


def test_one_of_several_callees_is_a_condition_unless_every_one_leads_there(run_scan, tmp_path):
    def probe(region, b_body="pass", last="C"):
        source = ALTERNATIVES.replace("{b_body}", b_body).replace("{last}", last).replace("{region}", region)
        (found,) = [f for f in _scan(run_scan, tmp_path, source).findings if f.callee == "subprocess.check_output"]
        return found

    only_a = probe("f")
    assert only_a.severity == "warning"
    assert [c.text for c in only_a.conditions] == ["`m.run` is A.run (one of 3)"]
    assert probe("f", b_body="probe()").severity == "warning"  # two of the three lead there: still a condition
    every = probe("f", b_body="probe()", last="A")  # A or B, and both probe
    assert every.severity == "error" and not every.conditions
    looped = probe("g")
    assert looped.severity == "error" and not looped.conditions


def test_every_callee_under_one_branch_and_the_other_branch_make_the_hazard_certain(run_scan, tmp_path):
    """``if fast: probe()`` / ``else: m.run(x)`` with both of m's classes probing: the callees fold to the
    branch (``not fast``), which with its opposite leaves no condition.  With a second undecided test in the
    ``else`` (``if deep: m.run(x)``) the fold leaves two conditions, and the hazard stays a warning."""
    body = """
def h(x, fast, deep):
    m = pick(os.environ.get("KIND"))
    if fast:
        probe()
    else:
        {guard}m.run(x)
    return x
"""
    def probe(guard):
        src = ALTERNATIVES.replace("{b_body}", "probe()").replace("{last}", "A").replace("{region}", "h")
        src = src.replace("def g(x):", body.format(guard=guard) + "\ndef g(x):")
        return [f for f in _scan(run_scan, tmp_path, src).findings if f.callee == "subprocess.check_output"]

    assert [(f.severity, f.conditions) for f in probe("")] == [("error", ())]
    behind = probe("if deep:\n            ")
    assert behind and all(f.severity == "warning" and f.conditions for f in behind)


def test_either_certain_is_either_leaving_no_condition():
    """Reach.walk asks only whether two paths' conditions together leave none (either_certain), and counts
    callee alternatives only on paths of at most two distinct conditions (three_distinct): they must say what
    either and a set say, on repeated, opposite and alternative conditions."""
    import itertools

    from compile_lint.findings import ALTERNATIVE, Condition
    from compile_lint.reach_conditions import either, either_certain, three_distinct

    a, not_a = Condition("m.py", 3, "a", ("name", "a"), True), Condition("m.py", 3, "not a", ("name", "a"), False)
    b = Condition("m.py", 5, "b", ("name", "b"), True)
    alt1 = Condition("m.py", 7, "`f` is A (one of 2)", (ALTERNATIVE, "m.py", (7, 0, "f"), 2), "A")
    alt2 = Condition("m.py", 7, "`f` is B (one of 2)", (ALTERNATIVE, "m.py", (7, 0, "f"), 2), "B")
    a_again = Condition("m.py", 3, "a", ("name", "a"), True)  # equal, another object
    pool = [a, not_a, b, alt1, alt2, a_again]
    paths = [p for n in range(1, 4) for p in itertools.product(pool, repeat=n)]
    checked = 0
    for old in paths:
        assert three_distinct(old) == (len(set(old)) > 2), old
        for new in [()] + paths:
            assert either_certain(old, new) == (either(old, new) == ()), (old, new)
            checked += either_certain(old, new)
    assert checked > 0


def test_conditions_are_equal_by_where_and_what_they_say():
    """A condition is its place and its text (how the guard was spelled and which way it went only tell its
    opposite apart): equal, equal hashes; any other field differing, or another type, not equal."""
    from compile_lint.findings import Condition

    a = Condition("m.py", 3, "a", ("name", "a"), True)
    assert a == Condition("m.py", 3, "a", ("name", "b"), False) and hash(a) == hash(Condition("m.py", 3, "a"))
    assert a != Condition("m.py", 4, "a") and a != Condition("n.py", 3, "a") and a != Condition("m.py", 3, "b")
    assert a != ("m.py", 3, "a") and len({a, Condition("m.py", 3, "a"), Condition("m.py", 3, "not a")}) == 2


def test_a_config_default_decides_a_branch_only_as_an_assumption(run_scan, tmp_path):
    """A dataclass field read on an instance holds what the constructor was given; the class value is only its
    default.  A test decided by the default is walked both ways: the default's way says it assumes it, the
    other way says it is not the default (a flan-T5 checkpoint's ``feed_forward_proj = 'gated-gelu'``).  A
    flag derived from the field (``__post_init__``'s ``split``) carries the assumption along."""
    result = _scan(run_scan, tmp_path, '''
        import dataclasses, os, subprocess, torch

        @dataclasses.dataclass
        class Config:
            feed_forward_proj: str = "relu"
            use_cache: bool = False

            def __post_init__(self):
                act_info = self.feed_forward_proj.split("-")
                self.is_gated_act = act_info[0] == "gated"

        class Plain:
            verbose = False  # a class attribute of a plain class: one value, decided

        class Layer(torch.nn.Module):
            def __init__(self, config: Config, plain: Plain):
                super().__init__()
                self.config = config
                self.plain = plain

            def forward(self, x):
                if self.config.is_gated_act:
                    subprocess.run(["gated"])
                else:
                    os.system("relu")
                if self.config.use_cache:
                    subprocess.check_output(["cache"])
                if self.plain.verbose:
                    subprocess.run(["never"])
                return x

        layer = torch.compile(Layer(Config(), Plain()), fullgraph=True)
        ''')
    got = _by_line(result)
    assert got[24].severity == "warning"
    assert [c.text for c in got[24].conditions] == [
        "self.config.is_gated_act (not the default Config.feed_forward_proj = 'relu')"]
    assert got[26].severity == "warning"
    assert [c.text for c in got[26].conditions] == [
        "not self.config.is_gated_act (assumes the default Config.feed_forward_proj = 'relu')"]
    assert [c.text for c in got[28].conditions] == ["self.config.use_cache (not the default Config.use_cache = False)"]
    assert 30 not in got  # a plain class's attribute is no assumption: that branch never runs


def test_a_user_fact_replaces_the_default_assumption(run_scan, tmp_path):
    """``--assume`` states the deployment's value: the test is decided, with no condition left."""
    from compile_lint.program.facts import parse_assumption

    source = '''
        import dataclasses, subprocess, torch

        @dataclasses.dataclass
        class ServerArgs:
            quantization: str = None

        def f(x, server_args: ServerArgs):
            if server_args.quantization == "modelopt_fp4":
                subprocess.run(["nvcc"])
            return x

        f_c = torch.compile(f, fullgraph=True)
        '''
    (plain,) = [f for f in _scan(run_scan, tmp_path, source).findings if f.severity != "note"]
    assert plain.severity == "warning" and [c.text for c in plain.conditions] == [
        "server_args.quantization == 'modelopt_fp4' (not the default ServerArgs.quantization = None)"]
    named = _scan(run_scan, tmp_path, source,
                  assume=[parse_assumption("server_args.quantization=modelopt_fp4")])
    (f,) = [f for f in named.findings if f.severity != "note"]
    assert f.severity == "error" and not f.conditions


def test_a_field_the_constructions_pass_holds_what_they_pass(run_scan, tmp_path):
    """What the program's constructions pass by keyword is the field's value; the class value only where a
    construction omits it (sglang's ``TopKConfig(top_k=top_k, use_grouped_topk=use_grouped_topk)``)."""
    result = _scan(run_scan, tmp_path, '''
        import dataclasses, os, subprocess, torch

        @dataclasses.dataclass
        class TopKConfig:
            use_grouped_topk: bool = False
            renormalize: bool = True

        class TopK(torch.nn.Module):
            def __init__(self, use_grouped_topk):
                super().__init__()
                self.cfg = TopKConfig(use_grouped_topk=use_grouped_topk, renormalize=True)

            def forward(self, x):
                if self.cfg.use_grouped_topk:
                    subprocess.run(["grouped"])
                if not self.cfg.renormalize:
                    os.system("never")
                return x

        m = torch.compile(TopK(True), fullgraph=True)
        ''')
    got = _by_line(result)
    # passed a parameter: undecided, with no default to name
    assert got[16].severity == "warning" and [c.text for c in got[16].conditions] == ["self.cfg.use_grouped_topk"]
    # every construction passes the constant True: decided, the branch never runs
    assert 18 not in got


def test_a_fold_of_two_paths_reports_the_first_path_in_walk_order():
    """A hazard reached under ``c1 and c2`` and under ``c1 and not c2`` is reported again under ``c1``
    (fold_alternatives), with one of the two paths.  Which one was the first pair met iterating a set of the
    two condition tuples: an order of their strings' hashes, another path shown in every process (6 or 7 of
    the bench site's 4,239 findings).  It is the first path in walk order, whichever order the walk met them."""
    from compile_lint.findings import Condition, Finding
    from compile_lint.reach_conditions import fold_alternatives

    c1 = Condition("m.py", 3, "flag", expr=("name", "flag"), polarity=True)
    c2 = Condition("m.py", 4, "x > 2", expr=("compare", "x"), polarity=True)
    not_c2 = Condition("m.py", 4, "not (x > 2)", expr=("compare", "x"), polarity=False)
    paths = {"call at line 5": (c1, c2), "call at line 7": (c1, not_c2)}
    for order in (list(paths), list(reversed(paths))):
        found, redo = [], {}
        for path in order:
            f = Finding(rule="CL101", severity="warning", path="h.py", line=9, col=4, qualname="g",
                        message="hazard", dynamo="skipped", region=None, trace=(), callee="subprocess.run",
                        fix_point="g", conditions=paths[path])
            found.append(f)
            redo[id(f)] = lambda conds, path=path: [(path, conds)]  # (the report again: its path, new conditions)
        assert fold_alternatives(found, redo) == [(order[0], (c1,))]
