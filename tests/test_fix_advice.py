"""Issue [D] item 5: a rule's fix advice is a fact of the installed torch too.  Each advice below is applied to
the rule's own hazard in a fresh process under ``torch.compile(fullgraph=True, backend="eager")``; the advice
must make it compile, and the advice the rule no longer gives must still fail (so the test notices when a torch
release changes either)."""
import subprocess
import sys
import textwrap

import pytest

from compile_lint.rules import ALL_RULES

pytestmark = pytest.mark.oracle

PROGRAM = '''
import logging, torch
log = logging.getLogger("compile_lint_advice")
{advice}
def f(x):
    {hazard}
    return x + 1
try:
    torch.compile(f, fullgraph=True, backend="eager")(torch.ones(2))
    print("COMPILES")
except Exception as e:
    print("STOPS", type(e).__name__, str(e).splitlines()[0])
'''

CASES = [
    # rule, the advice as code, the hazard, whether it compiles with the advice
    ("CL107", "torch._dynamo.config.ignore_logger_methods.add(logging.Logger.warning)", 'log.warning("w")', True),
    ("CL107", "torch._dynamo.config.reorderable_logging_functions.add(log.warning)", 'log.warning("w")', False),
    ("CL108", "torch._dynamo.config.reorderable_logging_functions.add(print)", 'print("p")', True),
]


def _run(advice: str, hazard: str) -> str:
    src = PROGRAM.format(advice=advice, hazard=hazard)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(src)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("code,advice,hazard,compiles", CASES)
def test_fix_advice_measured_on_the_installed_torch(code, advice, hazard, compiles):
    pytest.importorskip("torch")
    key = advice.split("(")[0].split(".")[-2]  # ignore_logger_methods / reorderable_logging_functions
    fix = ALL_RULES[code].fix
    # the rule advises what works and says so of what does not
    assert key in fix and (f"`{key}` does not help" in fix) != compiles, f"{code}'s fix advice on {key}: {fix}"
    assert _run("", hazard).startswith("STOPS"), "the hazard itself no longer stops Dynamo"
    got = _run(advice, hazard)
    assert got.startswith("COMPILES") == compiles, got
