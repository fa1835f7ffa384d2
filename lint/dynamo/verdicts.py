"""What Dynamo did with each probed callee, measured on one torch (``data/verdicts-torch-<version>.json``).

The tables are written by ``scripts/measure_dynamo_verdicts.py`` from the probes in ``probes.py``; the oracle
test (tests/test_dynamo_verdicts.py) re-measures the bundled table on the installed torch.  The rules read
them: a sink whose verdict is ``compiles`` is not reported as a break, one that stops Dynamo is reported with
the measured exception, first message line and graph-break id.

:func:`load_verdicts` picks the table for a torch version: the one measured on exactly that version, else on
the same release without its local tag (``2.13.0`` for ``2.13.0+cu130``), else the nearest release; its
``source`` says which, so a scan on a torch nobody measured says so in its header.  Stdlib only.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Optional

DATA_DIR = Path(__file__).parent / "data"
TABLE_GLOB = "verdicts-torch-*.json"
STOP_OUTCOMES = frozenset({"unsupported", "error"})  # a Dynamo exception: fullgraph=True fails there
REMEASURE = "python scripts/measure_dynamo_verdicts.py --out lint/dynamo/data/verdicts-torch-<version>.json"


@dataclass(frozen=True)
class Verdict:
    outcome: str  # compiles | unsupported | error | raised | not-installed | not-available | timeout | crashed
    exception: str = ""
    message: str = ""
    gb: Optional[str] = None
    where: str = ""  # the skipped C function, from Dynamo's debug context (GB0007)
    baked: Optional[bool] = None  # compiles, and a change between two calls was not seen (no guard)

    @property
    def stops(self) -> bool:
        return self.outcome in STOP_OUTCOMES

    @property
    def compiles(self) -> bool:
        return self.outcome == "compiles"

    @classmethod
    def from_json(cls, d: Mapping) -> "Verdict":
        return cls(str(d.get("outcome", "")), str(d.get("exception", "")), str(d.get("message", "")),
                   d.get("gb"), str(d.get("where", "")), d.get("baked"))


def version_key(version: str) -> Optional[tuple]:
    """(major, minor, patch) of a torch version string, or None."""
    m = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", version or "")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


@dataclass(frozen=True)
class VerdictTable:
    torch: str
    python: str
    measured: str
    verdicts: Mapping[str, Verdict] = field(hash=False, compare=False)
    source: str = ""
    exact: bool = True  # measured on the torch asked for (same release)

    def get(self, callee: str) -> Optional[Verdict]:
        """The verdict measured for exactly this callee."""
        return self.verdicts.get(callee)

    def lookup(self, callee: str) -> Optional[Verdict]:
        """The verdict for this callee, else for the longest ``module.*`` pattern that covers it (measured on
        one representative member)."""
        v = self.verdicts.get(callee)
        if v is not None:
            return v
        return self._pattern(callee)

    @lru_cache(maxsize=None)  # noqa: B019 - tables live for the process; asked once per distinct callee
    def _pattern(self, callee: str) -> Optional[Verdict]:
        best, best_len = None, -1
        for pat, v in self.verdicts.items():
            if pat.endswith(".*") and callee.startswith(pat[:-1]) and len(pat) > best_len:
                best, best_len = v, len(pat)
        return best

    def compiles(self, callee: str) -> bool:
        """Measured, for this very callee, to compile under fullgraph=True (a pattern's representative is not
        evidence for its other members)."""
        v = self.verdicts.get(callee)
        return v is not None and v.compiles

    def stops(self, callee: str) -> bool:
        v = self.lookup(callee)
        return v is not None and v.stops


def bundled_tables() -> dict:
    """{torch version: path} of the tables shipped in ``data/``."""
    out = {}
    for path in sorted(DATA_DIR.glob(TABLE_GLOB)):
        try:
            with open(path, encoding="utf-8") as f:
                out[str(json.load(f)["torch"])] = path
        except (OSError, ValueError, KeyError):
            continue
    return out


def read_table(path: Path, source: str = "", exact: bool = True) -> VerdictTable:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    verdicts = {k: Verdict.from_json(v) for k, v in (data.get("verdicts") or {}).items()}
    return VerdictTable(str(data.get("torch", "")), str(data.get("python", "")), str(data.get("measured", "")),
                        verdicts, source, exact)


def choose(torch_version: Optional[str], available) -> tuple:
    """(version of the table to use, exact?) for the torch asked for, among the ``available`` versions."""
    available = list(available)
    if not available:
        return None, False
    if torch_version in available:
        return torch_version, True
    want = version_key(torch_version or "")
    keyed = [(version_key(v), v) for v in available if version_key(v)]
    if want is None or not keyed:
        return max(keyed)[1] if keyed else available[0], False
    same = [v for k, v in keyed if k == want]
    if same:
        return same[0], True

    def distance(k):
        return (abs(k[0] - want[0]) * 1000 + abs(k[1] - want[1])) * 1000 + abs(k[2] - want[2])

    # nearest release; on a tie, the newer one (Dynamo mostly traces more as it ages)
    return min(keyed, key=lambda kv: (distance(kv[0]), tuple(-x for x in kv[0])))[1], False


@lru_cache(maxsize=None)
def load_verdicts(torch_version: Optional[str] = None) -> Optional[VerdictTable]:
    """The bundled verdict table for ``torch_version`` (None: no torch known -> the newest table)."""
    tables = bundled_tables()
    chosen, exact = choose(torch_version, tables)
    if chosen is None:
        return None
    if exact:
        source = f"Dynamo verdicts measured on torch {chosen}"
    elif torch_version and version_key(torch_version):
        source = (f"Dynamo verdicts measured on torch {chosen}, the nearest to torch {torch_version} "
                  f"(not measured there; re-measure: {REMEASURE})")
    else:
        source = f"Dynamo verdicts measured on torch {chosen} (no torch version known)"
    return read_table(tables[chosen], source, exact)
