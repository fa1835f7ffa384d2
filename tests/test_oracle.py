"""Oracle: re-measure every corpus case on the installed torch, so neither expected.json nor corpus_stops.json
can drift from Dynamo.

Each case runs once, in a fresh process (as when it was measured: tests/oracle_runner.py), which measures both
its first stop under ``torch.compile(fullgraph=True, backend="eager")`` and every stop in order.  The tests check
``lint == "error"`` <=> Dynamo raises, and for errors that the exception class is the measured one; that the
every-stop run's first stop is the fullgraph stop (the two runs measure the same program); and that every
case's stops are the committed tests/corpus_stops.json (regenerate it with scripts/measure_corpus_stops.py).
"""
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from oracle_runner import run_fresh, stops_of

torch = pytest.importorskip("torch")

CORPUS = Path(__file__).parent / "corpus"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())["cases"]
STOPS = json.loads((Path(__file__).parent / "corpus_stops.json").read_text())

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("oracle")
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        results = dict(zip(EXPECTED, pool.map(lambda n: run_fresh(CORPUS / "cases", n, tmp), EXPECTED)))
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


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_first_of_every_stop_is_the_fullgraph_stop(name, measured):
    """The fullgraph=False run's first stop is where fullgraph=True raised (place and GB id), and where
    expected.json measured it; a case that compiles has no stop."""
    got = measured[name]
    assert not got.get("crashed"), got.get("stderr")
    if not got["raised"]:
        assert got["stops"] == []
        return
    first = got["stops"][0]
    assert f"{first['at']} ({first['func']})" == got["innermost_case_frame"]
    assert first["gb"] == got["gb"]
    frame = EXPECTED[name]["dynamo_fullgraph"]["innermost_case_frame"]
    assert f"cases/{got['innermost_case_frame']}" == frame


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_stops_match_committed(name, measured):
    got = measured[name]
    assert not got.get("crashed"), got.get("stderr")
    assert stops_of(got) == STOPS["cases"][name], (
        f"{name}: torch {torch.__version__} measures other stops than tests/corpus_stops.json (measured on "
        f"{STOPS['measured_on']}); regenerate it with scripts/measure_corpus_stops.py")
