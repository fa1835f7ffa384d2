"""The shape of a rule.  Rules themselves live in ``compile_lint.rules``, one module per hazard family.

A rule is data: the callees that trigger it (``calls``: fully qualified names, ``prefix.*`` for a whole
module; ``enters``: types whose ``with`` block is the hazard; ``shapes``: method names matched when the
receiver's type is unknown), what Dynamo does there (``dynamo``), its documentation in ruff's order, the
fixers that apply, and Fixit-style examples that the test-suite checks (``invalid`` must be flagged,
``valid`` must not; each defines ``f`` and compiles it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

BREAK = "break"  # Dynamo stops here: an error under fullgraph=True, a graph break otherwise
SILENT = "silent"  # compiles, but compiled behaviour differs from eager
NOTE = "note"  # worth knowing, not wrong by itself


@dataclass(frozen=True)
class DynamoOutcome:
    exception: str  # e.g. "torch._dynamo.exc.Unsupported", or "" for silent hazards
    gb: Optional[str]  # graph-break registry id, e.g. "GB0007"
    message: str  # the first line Dynamo prints
    where: str = ""  # where Dynamo actually stops (measured)

    def describe(self) -> str:
        if not self.exception:
            return self.message
        gb = f" ({self.gb})" if self.gb else ""
        where = f"; stops at {self.where}" if self.where else ""
        return f"{self.exception.rsplit('.', 1)[-1]}{gb}: {self.message}{where}"


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    kind: str  # BREAK | SILENT | NOTE
    message: str  # "{callee}" is replaced by the callee's qualified name
    dynamo: DynamoOutcome
    what: str
    why: str
    example: str
    fix: str
    fix_safety: str = "No automatic fix."
    fixes: tuple = ()  # fixer ids that can address it (see compile_lint.fixers)
    calls: tuple = ()
    enters: tuple = ()
    shapes: tuple = ()  # (method name, max positional args)
    valid: tuple = ()
    invalid: tuple = ()
    family: str = field(default="", compare=False)

    def matches_call(self, qualname: str) -> bool:
        for pat in self.calls:
            if pat.endswith(".*"):
                if qualname.startswith(pat[:-1]):
                    return True
            elif qualname == pat:
                return True
        return False

    def outcome_for(self, callee: str) -> str:
        """The predicted Dynamo outcome for this callee: the measured stop if known, else the rule's."""
        if self.dynamo.exception and callee:
            from .dynamo.model import GB_MESSAGES, callee_stop

            stop = callee_stop(callee)
            if stop is not None:
                gb, where = stop
                return DynamoOutcome(self.dynamo.exception, gb, GB_MESSAGES.get(gb, self.dynamo.message),
                                     where).describe()
        return self.dynamo.describe()

    def documentation(self) -> str:
        d = self.dynamo
        lines = [
            f"# {self.code} {self.name}",
            "",
            f"Severity: {'error under fullgraph=True, warning otherwise' if self.kind == BREAK else 'warning' if self.kind == SILENT else 'note'}",
            f"Dynamo: {d.describe()}",
            "",
            "## What it does",
            self.what.strip(),
            "",
            "## Why is this bad",
            self.why.strip(),
            "",
            "## Example",
            "```python",
            self.example.strip("\n"),
            "```",
            "",
            "## How to fix",
            self.fix.strip(),
            "",
            "## Fix safety",
            self.fix_safety.strip(),
        ]
        return "\n".join(lines) + "\n"
