"""Progress on long scans: one self-rewriting line on a terminal, nothing otherwise."""
from __future__ import annotations

import sys
import time


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
        extra = "".join(f", {k} {v}" for k, v in info.items())
        label = {"regions": "finding regions", "walk": "walking regions", "index": "indexing"}.get(event, event)
        self.stream.write(f"\r\x1b[2Kcompile-lint: {label} {done}/{total}{extra}")
        self.shown = True
        if done >= total:
            self.stream.write("\r\x1b[2K")
        self.stream.flush()

    __slots__ = ("stream", "last", "shown")
