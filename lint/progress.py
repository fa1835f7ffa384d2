"""Progress on long scans: one self-rewriting bar on a terminal, nothing otherwise (or with ``-q``).

Phases: ``index`` (files parsed ahead, when that is done before the rest: ``--jobs 1``), then ``scan``
(candidate files searched for compiled regions, each region walked as it is found; files ``parsed``,
``regions`` and ``findings`` so far).
"""
from __future__ import annotations

import sys
import time

_LABELS = {"index": ("parsing", "files"), "scan": ("scanning", "files")}
_WIDTH = 24


class Progress:
    def __init__(self, stream):
        self.stream = stream
        self.last = 0.0
        self.shown = False

    @classmethod
    def for_terminal(cls):
        return cls(sys.stderr) if sys.stderr.isatty() else None

    def __call__(self, event: str, done: int = 0, total: int = 0, **info):
        now = time.monotonic()
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        label, unit = _LABELS.get(event, (event, ""))
        filled = _WIDTH * done // total if total else 0
        bar = "#" * filled + "-" * (_WIDTH - filled)
        extra = "".join(f", {k} {v}" for k, v in info.items())
        self.stream.write(f"\r\x1b[2Kcompile-lint: {label:<15} [{bar}] {done}/{total} {unit}{extra}")
        self.shown = True
        if done >= total:
            self.stream.write("\r\x1b[2K")
        self.stream.flush()

    __slots__ = ("stream", "last", "shown")
