"""Issue [B]: the user's facts about the deployment (``--assume EXPR=VALUE``, ``--env NAME=VALUE``,
``--env-complete`` and their ``[tool.compile-lint]`` keys) decide branches the code cannot decide, and the
report says what each fact decided."""
import json
import re
import textwrap

import pytest

from compile_lint.program.facts import FactError, parse_assumption, parse_env
from ecosystem_util import cli, write

CONFIG_BRANCHES = '''
    import os, subprocess, torch

    class ServerArgs:
        quantization = None

    def f(x, server_args: ServerArgs, mode):
        if server_args.quantization == "modelopt_fp4":
            subprocess.run(["nvcc", "--version"])
        if os.environ.get("MY_DEBUG") == "1":
            os.system("true")
        if "MY_TRACE" in os.environ:
            open("/tmp/trace").read()
        if os.getenv("MY_LEVEL", "0") == "0":
            print("level 0")
        if mode == "eager":
            os.cpu_count()
        return x

    f_c = torch.compile(f, fullgraph=True)
    '''

DISPATCH = '''
    import subprocess, torch

    class QuantMethodBase:
        def apply(self, x):
            raise NotImplementedError

    class FP4Method(QuantMethodBase):
        def apply(self, x):
            subprocess.check_output(["nvcc", "--version"])
            return x

    class DenseMethod(QuantMethodBase):
        def apply(self, x):
            return x * 2

    class Linear(torch.nn.Module):
        def __init__(self, method: QuantMethodBase):
            super().__init__()
            self.quant_method: QuantMethodBase = method

        def forward(self, x):
            return self.quant_method.apply(x)

    @torch.compile(fullgraph=True)
    def run(layer: Linear, x):
        return layer(x)
    '''


def _scan(run_scan, tmp_path, source, **kw):
    (tmp_path / "m.py").write_text(textwrap.dedent(source))
    return run_scan(tmp_path / "m.py", **kw)


def _lines(result) -> dict:
    return {f.line: f.severity for f in result.findings if f.severity != "note" and f.rule != "CL201"}


def test_assumed_config_value_decides_its_branch(run_scan, tmp_path):
    a = [parse_assumption("server_args.quantization=modelopt_fp4"), parse_assumption("mode='eager'")]
    plain = _lines(_scan(run_scan, tmp_path, CONFIG_BRANCHES))
    assumed = _scan(run_scan, tmp_path, CONFIG_BRANCHES, assume=a)
    # the class attribute says None: the nvcc branch is dead unless the deployment sets the value
    assert 9 not in plain and _lines(assumed)[9] == "error"
    assert plain[17] == "warning" and _lines(assumed)[17] == "error"  # `mode`: a parameter nobody passes
    # how many expressions: one per scope the resolver evaluated it in -- at least one
    assert any(re.match(r"assume server_args.quantization = modelopt_fp4: was the value of \d+ expression", s)
               for s in assumed.stats["facts"]), assumed.stats["facts"]


def test_a_value_the_code_never_reaches_is_said_not_silently_void(run_scan, tmp_path):
    r = _scan(run_scan, tmp_path, CONFIG_BRANCHES, assume=[parse_assumption("server_args.quantisation=x")])
    assert r.stats["facts"] == ["assume server_args.quantisation = x: matched no expression the walk evaluated"]


def test_env_facts_decide_env_branches_and_unset_only_when_complete(run_scan, tmp_path):
    plain = _lines(_scan(run_scan, tmp_path, CONFIG_BRANCHES))
    assert plain[11] == plain[13] == plain[15] == "warning"
    given = _lines(_scan(run_scan, tmp_path, CONFIG_BRANCHES, env=[("MY_DEBUG", "1")]))
    assert given[11] == "error" and given[13] == given[15] == "warning"  # the others stay unknown
    complete = _scan(run_scan, tmp_path, CONFIG_BRANCHES, env=[("MY_DEBUG", "0")], env_complete=True)
    got = _lines(complete)
    # MY_DEBUG=0: the os.system branch is dead; MY_TRACE unset: so is open(); MY_LEVEL unset: its default "0"
    assert 11 not in got and 13 not in got and got[15] == "error"
    assert any(re.fullmatch(r"env MY_DEBUG=0: read \d+ times?", s) for s in complete.stats["facts"])


def test_assumed_class_picks_one_of_the_dispatch_alternatives(run_scan, tmp_path):
    plain = _scan(run_scan, tmp_path, DISPATCH)
    (f,) = [f for f in plain.findings if f.rule == "CL101"]
    assert f.severity == "warning" and "`self.quant_method.apply` is FP4Method.apply (one of 2)" in \
        [c.text for c in f.conditions]
    fp4 = _scan(run_scan, tmp_path, DISPATCH, assume=[parse_assumption("self.quant_method=FP4Method")])
    (f,) = [f for f in fp4.findings if f.rule == "CL101"]
    assert f.severity == "error" and not f.conditions
    assert re.fullmatch(r"assume self.quant_method = FP4Method: chose FP4Method in \d+ expressions?",
                        fp4.stats["facts"][0]), fp4.stats["facts"]
    dense = _scan(run_scan, tmp_path, DISPATCH, assume=[parse_assumption("quant_method=DenseMethod")])
    assert not [f for f in dense.findings if f.rule == "CL101"]
    typo = _scan(run_scan, tmp_path, DISPATCH, assume=[parse_assumption("self.quant_method=FP4Methd")])
    assert [f.severity for f in typo.findings if f.rule == "CL101"] == ["warning"]
    assert "found no FP4Methd among the values of" in typo.stats["facts"][0]


@pytest.mark.parametrize("text,why", [("quantization", "expected EXPR=VALUE"), ("a..b=1", "dotted attribute path"),
                                      ("x=", "empty"), ("f(x).y=1", "dotted attribute path")])
def test_bad_assumption_is_a_clear_error(text, why):
    with pytest.raises(FactError, match=why):
        parse_assumption(text)


def test_values_are_literals_or_words():
    assert parse_assumption("a.b=1").value == 1 and parse_assumption("a.b=1").is_literal
    assert parse_assumption("a.b='x'").value == "x" and parse_assumption("a.b='x'").is_literal
    w = parse_assumption("a.b=modelopt_fp4")
    assert w.value == "modelopt_fp4" and not w.is_literal
    assert parse_assumption("a.b", "1").value == "1"  # a TOML string stays a string
    assert parse_assumption("a.b", True).value is True
    with pytest.raises(FactError):
        parse_env("1BAD=x")
    assert parse_env("FLASHINFER_LOGLEVEL=0") == ("FLASHINFER_LOGLEVEL", "0")


def test_cli_and_config_carry_the_facts(tmp_path):
    write(tmp_path, {"m.py": textwrap.dedent(CONFIG_BRANCHES),
                     "pyproject.toml": textwrap.dedent('''
                         [tool.compile-lint]
                         assume = {"server_args.quantization" = "modelopt_fp4"}
                         env = {"MY_DEBUG" = "1"}
                         ''')})
    r = cli(["scan", ".", "--no-cache", "-q", "--format", "json"], tmp_path)
    doc = json.loads(r.stdout)
    errors = {f["line"] for f in doc["findings"] if f["severity"] == "error"}
    assert {9, 11} <= errors
    assert doc["stats"]["facts"][0].startswith("assume server_args.quantization = modelopt_fp4")
    # the command line wins for the same expression, and the text report lists every fact
    r = cli(["scan", ".", "--no-cache", "-q", "--assume", "server_args.quantization=None", "--env-complete"],
            tmp_path)
    assert "m.py:9:" not in r.stdout and "Facts assumed" in r.stdout
    assert "assume server_args.quantization = None: was the value of" in r.stdout
    assert "env complete: any variable not listed is unset" in r.stdout
    bad = cli(["scan", ".", "--no-cache", "-q", "--env", "NOVALUE"], tmp_path)
    assert bad.exit_code == 2 and "expected NAME=VALUE" in bad.stderr


def test_bad_config_facts_are_errors(tmp_path):
    write(tmp_path, {"m.py": "x = 1\n", "pyproject.toml": '[tool.compile-lint]\nassume = ["a=1"]\n'})
    r = cli(["scan", ".", "--no-cache", "-q"], tmp_path)
    assert r.exit_code == 2 and "assume: expected a table" in r.stderr


def test_the_result_cache_keys_on_the_facts(tmp_path):
    write(tmp_path, {"m.py": textwrap.dedent(CONFIG_BRANCHES)})
    first = cli(["scan", ".", "-q", "--format", "json"], tmp_path)
    second = cli(["scan", ".", "-q", "--format", "json", "--env", "MY_DEBUG=1"], tmp_path)
    sev = lambda r: {f["line"]: f["severity"] for f in json.loads(r.stdout)["findings"]}  # noqa: E731
    assert sev(first)[11] == "warning" and sev(second)[11] == "error"


# FlashInfer 0.7.2.post1's norm/__init__.py, in small: a flag set from the environment, then to True where the
# CuTe DSL kernels do not import; the API takes the CUDA JIT path when the flag is set
OPTIONAL_BACKEND = {
    "pkg/__init__.py": '''
        import functools, importlib.util, os, subprocess, torch

        _USE_CUDA_NORM = os.environ.get("PKG_USE_CUDA_NORM", "0") == "1"

        if not _USE_CUDA_NORM:
            try:
                from .kernels import rmsnorm_cute
            except (ImportError, AttributeError):
                _USE_CUDA_NORM = True


        @functools.cache
        def _dsl_supports_arch():
            return importlib.util.find_spec("cutlass") is not None


        def _use_cuda_norm():
            if _USE_CUDA_NORM:
                return True
            return not _dsl_supports_arch()


        def rmsnorm(x):
            if _use_cuda_norm():
                subprocess.run(["nvcc", "--version"])
            else:
                rmsnorm_cute(x)
            return x

        f = torch.compile(rmsnorm, fullgraph=True)
        ''',
    "pkg/kernels/__init__.py": "from .rmsnorm import rmsnorm_cute\n",
    "pkg/kernels/rmsnorm.py": "import cutlass\n\n\ndef rmsnorm_cute(x):\n    return cutlass.cute(x)\n",
}


def test_a_package_the_deployment_lacks_fails_its_imports(run_scan, tmp_path):
    write(tmp_path, OPTIONAL_BACKEND)
    by_rule = lambda r: {f.rule: f for f in r.findings if f.rule in ("CL101", "CL117")}  # noqa: E731
    # not said: whether the kernels import is unknown, so is the flag; each path is a warning under its branch
    plain = by_rule(run_scan(tmp_path / "pkg", use_environment=False, torch_version="2.11"))
    assert plain["CL101"].severity == "warning"
    assert any("not _USE_CUDA_NORM" in c.text for c in plain["CL117"].conditions), plain["CL117"].conditions
    # cutlass not installed: pkg.kernels.rmsnorm's `import cutlass` fails, so does `from .kernels import ...`;
    # the handler sets the flag, which is then True whatever the environment says: the JIT path is certain
    lacking = run_scan(tmp_path / "pkg", use_environment=False, torch_version="2.11", not_installed=["cutlass"])
    got = by_rule(lacking)
    assert got["CL101"].severity == "error" and not got["CL101"].conditions
    assert "CL117" not in got  # the CuTe DSL probe is dead code
    assert re.fullmatch(r"not installed cutlass: failed \d+ imports? the walk met", lacking.stats["facts"][0])
    # a package the code never imports decides nothing, and says so
    other = run_scan(tmp_path / "pkg", use_environment=False, torch_version="2.11", not_installed=["flash_attn"])
    assert by_rule(other)["CL101"].severity == "warning"
    assert other.stats["facts"] == ["not installed flash_attn: no import of it decided a branch"]


def test_not_installed_from_the_command_line_and_the_config(tmp_path):
    write(tmp_path, OPTIONAL_BACKEND)
    r = cli(["scan", "pkg", "--no-cache", "-q", "--no-environment", "--torch-version", "2.11", "--format", "json",
             "--not-installed", "cutlass"], tmp_path)
    doc = json.loads(r.stdout)
    assert [f["severity"] for f in doc["findings"] if f["rule"] == "CL101"] == ["error"]
    write(tmp_path, {"pyproject.toml": '[tool.compile-lint]\nnot-installed = ["cutlass"]\n'})
    r = cli(["scan", "pkg", "--no-cache", "-q", "--no-environment", "--torch-version", "2.11"], tmp_path)
    assert "not installed cutlass: failed" in r.stdout
    bad = cli(["scan", "pkg", "--no-cache", "-q", "--not-installed", "no such"], tmp_path)
    assert bad.exit_code == 2 and "expected a module name" in bad.stderr
