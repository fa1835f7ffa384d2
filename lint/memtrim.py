"""Giving the memory a scan freed back to the system while it runs (glibc's ``malloc_trim``).

Python keeps small objects in its own arenas; what is larger than 512 bytes -- a summary's pickled bytes from
the indexing workers (up to 2.4 MB each on the bench site), a file's text, the tables of dicts and sets as
they grow -- comes from the C library's ``malloc``.  glibc gives a freed block back to the system only when
it lies at the top of its heap, so the holes that freeing such blocks leaves stay resident: on the bench site
some 76 MB of free blocks at the walks' end in the main heap, and the heap of the thread that receives the
workers' results (``concurrent.futures``' manager thread) held some 60 MB more until the pool shut down (its
RSS fell from 2,147 to 2,083 MB at ``BackgroundIndexer.finish``).  ``malloc_trim(0)`` releases every whole
free page of every heap; asked at most once a second while the scan finds and walks its regions (183 times,
0.17 s in all), the tracked cold scan of the bench site peaked at 2,046 MB where it peaked at 2,140 (side by
side, in-process; README, "Incremental rows", session 47).  Asked from the scan's own thread, not one of its
own (as first tried: 2,037 MB): the command forks to write its cache behind only while it has one thread
(cli._write_behind), and the scan passes a module load, a candidate or a region often enough.

Elsewhere than on glibc (macOS, musl) there is no ``malloc_trim``: ``maybe`` does nothing.
"""
from __future__ import annotations

import contextlib
import sys
import time
from typing import Callable, Optional

INTERVAL = 1.0  # seconds between two trims at most: a trim costs a few milliseconds


def _find_trim() -> Optional[Callable]:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        fn = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError, ImportError):  # not glibc
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


class Trimmer:
    """``maybe()``: trim if ``INTERVAL`` seconds passed since the last trim.  Asked at points the scan passes
    often (each module loaded, each candidate searched, each region walked), on the thread that allocates
    most."""

    def __init__(self, trim: Optional[Callable], interval: Optional[float] = None):
        self.interval = INTERVAL if interval is None else interval
        self._trim = trim
        self._last = time.monotonic()
        self.trims = 0
        self.seconds = 0.0  # spent trimming

    def maybe(self) -> None:
        if self._trim is None:
            return
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        self._trim(0)
        self._last = time.monotonic()
        self.trims += 1
        self.seconds += self._last - now


ACTIVE: list = [Trimmer(None)]  # the scan in progress's (trimming), else one that does nothing


def maybe() -> None:
    ACTIVE[0].maybe()


@contextlib.contextmanager
def trimming(trim: Optional[Callable] = None):
    """While the block runs, ``maybe()`` trims (``trim``: glibc's ``malloc_trim`` unless given); the
    Trimmer."""
    before = ACTIVE[0]
    ACTIVE[0] = t = Trimmer(trim if trim is not None else _find_trim())
    try:
        yield t
    finally:
        ACTIVE[0] = before
