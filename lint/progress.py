"""Progress on long scans: one self-rewriting bar on a terminal; one plain line every ~10 s otherwise (a CI
log, a pipe), so that a minute-long scan is never silent; nothing with ``-q``.

Phases: ``index`` (files parsed ahead, when that is done before the rest: ``--jobs 1``), then ``scan``
(candidate files searched for compiled regions, each region walked as it is found; files ``parsed``,
``regions`` and ``findings`` so far).
"""
from __future__ import annotations

import sys
import time

_LABELS = {"index": ("parsing", "files"), "scan": ("scanning", "files")}
_WIDTH = 24
LOG_INTERVAL_S = 10.0  # a line this often when stderr is not a terminal


class Progress:
    def __init__(self, stream, live: bool = True, interval: float = LOG_INTERVAL_S):
        self.stream = stream
        self.live = live
        self.interval = interval
        self.start = self.last = time.monotonic()
        self.shown = False

    @classmethod
    def for_terminal(cls):
        """A live bar on a terminal, else plain lines every ``LOG_INTERVAL_S`` (the name is historical)."""
        return cls.for_stream(sys.stderr)

    @classmethod
    def for_stream(cls, stream):
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        return cls(stream, live=tty)

    def __call__(self, event: str, done: int = 0, total: int = 0, **info):
        now = time.monotonic()
        label, unit = _LABELS.get(event, (event, ""))
        extra = "".join(f", {k} {v}" for k, v in info.items())
        if not self.live:
            # the first line after `interval`, then one per `interval`; none for a scan shorter than that
            if now - self.last < self.interval:
                return
            self.last = now
            self.stream.write(f"compile-lint: {label} {done}/{total} {unit}{extra} ({now - self.start:.0f} s)\n")
            self.stream.flush()
            self.shown = True
            return
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        filled = _WIDTH * done // total if total else 0
        bar = "#" * filled + "-" * (_WIDTH - filled)
        self.stream.write(f"\r\x1b[2Kcompile-lint: {label:<15} [{bar}] {done}/{total} {unit}{extra}")
        self.shown = True
        if done >= total:
            self.stream.write("\r\x1b[2K")
        self.stream.flush()

    __slots__ = ("stream", "live", "interval", "start", "last", "shown")
