"""Findings: what the walk reports, in the shape every output format starts from."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

from .hashonce import HashOnce

SEVERITY_ORDER = {"error": 0, "warning": 1, "note": 2}


@dataclass(frozen=True)
class Frame:
    """One function on the call path: where it lives and the line that leads on (a call, or the hazard)."""

    path: str
    line: int
    qualname: str
    # where the call leading on ends (line, column): the order of two calls on one line (lint/firsthazard.py)
    end: tuple = field(default=(), compare=False, repr=False)


# The kinds of condition stated by the walk rather than read from a guard (``Condition.expr[0]``): one of a
# call's several callees (Reach's _alternatives), a wrapper its decorator installs on some paths only, the body
# of a ``torch.compiler.disable``d function (Dynamo never traces it: what removing the disable would expose).
ALTERNATIVE, CONDITIONAL_WRAPPER, BEHIND_DISABLE = "alternative", "conditional wrapper", "behind disable"
# a hazard only where the caller passes an optional argument (its default compiles): the third part of the
# condition's ("unknown", text, ARGUMENT_PASSED) expression
ARGUMENT_PASSED = "argument passed"


@dataclass(frozen=True)
class Condition(HashOnce):
    """A branch on the path to a hazard that the analyzer could not decide: the hazard is reached only if
    ``text`` holds at ``path:line`` (``"dynamic" in self.rope_type``, ``the try body raises``)."""

    path: str
    line: int
    text: str
    # the guard itself, to recognise its opposite (the same branch taken the other way: `if c:` / `else:`)
    expr: tuple = field(default=(), compare=False, repr=False)
    polarity: bool = field(default=True, compare=False, repr=False)

    _HASHED = ("path", "line", "text")  # the fields equality compares
    __hash__ = HashOnce.__hash__

    def __eq__(self, other) -> bool:
        # (the dataclass's own builds two tuples per comparison; a walk compares the conditions of its paths
        # millions of times, mostly an object with itself or two that differ by line)
        if self is other:
            return True
        if other.__class__ is not Condition:
            return NotImplemented
        return self.line == other.line and self.text == other.text and self.path == other.path

    def opposes(self, other: "Condition") -> bool:
        if self.expr[:1] == (ALTERNATIVE,):
            return False  # one of a call's several callees: folded only once every one is seen (reach)
        return (self.path, self.line, self.expr) == (other.path, other.line, other.expr) and \
            self.polarity != other.polarity and bool(self.expr)

    def describe(self) -> str:
        return f"{self.text} ({self.path}:{self.line})"


@dataclass(frozen=True)
class RegionRef:
    path: str
    line: int
    qualname: str
    fullgraph: Optional[bool]
    kind: str = "torch.compile"


# Slotted, and no list of its own until a fixer gives it one (postwalk): an incremental scan keeps every
# region's findings for its state (307,660 on the benchmark site), which held 196 MB at the walks' end with a
# __dict__ and an empty list each, 149 MB so
@dataclass(slots=True)
class Finding:
    rule: str
    severity: str
    path: str  # the hazard's file (absolute until the report relativises it)
    line: int
    col: int
    qualname: str  # the function holding the hazard line
    message: str
    dynamo: str
    region: RegionRef
    trace: tuple  # Frames from the compiled function to the hazard's function
    callee: str = ""  # the hazardous callee, fully qualified
    fixes: Sequence = ()
    regions_reaching: int = 1
    other_regions: tuple = ()  # RegionRefs of the other regions that reach the same hazard
    fix_point: str = ""  # outermost function on the path that owns the hazard (outside the region's own file)
    env_key: str = ""  # for a read of os.environ[key] / .get / `in`: the key (see postwalk.drop_set_env_keys)
    # the undecided branches on the path (Condition): empty when every guard on it is decided true or absent,
    # i.e. the hazard is met every time the region is traced
    conditions: tuple = ()

    @property
    def certain(self) -> bool:
        return not self.conditions

    def sort_key(self):
        return (self.path, self.line, self.col, self.rule)

    def fingerprint(self) -> str:
        """Stable across line shifts: rule, file, enclosing function and callee."""
        import hashlib

        raw = f"{self.rule}|{self.path}|{self.qualname}|{self.callee}|{self.region.qualname}"
        return hashlib.sha1(raw.encode()).hexdigest()[:16]
