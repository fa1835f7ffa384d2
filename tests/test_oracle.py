"""Oracle: re-measure every corpus case on the installed torch, so expected.json can never drift from Dynamo.

Each case runs in a fresh process (as when it was measured) under
``torch.compile(fullgraph=True, backend="eager")``; the test checks ``lint == "error"`` <=> Dynamo raises,
and for errors that the exception class is the measured one.
"""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

CORPUS = Path(__file__).parent / "corpus"
RUNNER = Path(__file__).parent / "oracle_runner.py"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())["cases"]

pytestmark = pytest.mark.oracle


def _run(name: str, tmp: Path) -> dict:
    env = dict(os.environ, CASE_TMP=str(tmp / name), PYTHONDONTWRITEBYTECODE="1")
    (tmp / name).mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, str(RUNNER), str(CORPUS / "cases"), name], capture_output=True, text=True,
                          timeout=300, env=env, cwd=tmp)
    if proc.returncode != 0 or not proc.stdout.strip():
        return {"crashed": True, "stderr": proc.stderr[-2000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("oracle")
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        results = dict(zip(EXPECTED, pool.map(lambda n: _run(n, tmp), EXPECTED)))
    return results


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_case_matches_installed_dynamo(name, measured):
    got = measured[name]
    assert not got.get("crashed"), got.get("stderr")
    case = EXPECTED[name]
    assert got["raised"] == (case["lint"] == "error"), (
        f"{name}: expected.json says {case['lint']!r}, torch {torch.__version__} "
        f"{'raised ' + str(got['exc']) + ': ' + str(got['first_line']) if got['raised'] else 'compiled it'}")
    if got["raised"]:
        assert got["exc"] == case["dynamo_fullgraph"]["exc"]
