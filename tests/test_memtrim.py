"""The memory a scan frees, given back to the system as it goes (lint/memtrim.py)."""
from __future__ import annotations

import sys
import textwrap

import pytest

from compile_lint import memtrim
from compile_lint.engine import ScanOptions, scan


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_trim_is_asked_at_most_once_an_interval(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(memtrim.time, "monotonic", clock)
    asked = []
    t = memtrim.Trimmer(lambda pad: asked.append(pad) or 1, interval=1.0)
    t.maybe()
    assert asked == []  # (the interval counts from the trimmer's start)
    clock.now += 1.5
    t.maybe()
    t.maybe()
    assert asked == [0] and t.trims == 1
    clock.now += 0.5
    t.maybe()
    assert asked == [0]
    clock.now += 0.6
    t.maybe()
    assert asked == [0, 0] and t.trims == 2


def test_without_malloc_trim_nothing_is_asked():
    t = memtrim.Trimmer(None, interval=0.0)
    t.maybe()
    assert t.trims == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_on_linux_the_c_librarys_trim_is_found_and_runs():
    trim = memtrim._find_trim()
    assert trim is not None and trim(0) in (0, 1)  # (1: memory was released)


def test_a_scan_trims_as_it_loads_modules_and_stops_after(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "helpers.py").write_text("import os\n\ndef flag():\n    return os.environ.get('X')\n")
    (root / "model.py").write_text(textwrap.dedent("""
        import torch
        from helpers import flag

        @torch.compile(fullgraph=True)
        def f(x):
            if flag():
                x = x + 1
            return x
        """))
    asked = []
    monkeypatch.setattr(memtrim, "_find_trim", lambda: asked.append)
    monkeypatch.setattr(memtrim, "INTERVAL", 0.0)
    before = memtrim.ACTIVE[0]
    result = scan(ScanOptions(paths=[root], use_environment=False))
    assert result.findings  # (the scan walked the region: what follows is from a scan that did its work)
    assert len(asked) >= 3  # each module loaded, the candidate searched, the region walked
    assert memtrim.ACTIVE[0] is before  # (a scan's trimmer ends with it)
    n = len(asked)
    memtrim.maybe()
    assert len(asked) == n
