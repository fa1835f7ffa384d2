"""The shape of a rule.  Rules themselves live in ``compile_lint.rules``, one module per hazard family.

A rule is data: the callees that trigger it (``calls``: fully qualified names, ``prefix.*`` for a whole
module; ``enters``: types whose ``with`` block is the hazard; ``shapes``: method names matched when the
receiver's type is unknown), what Dynamo does there (``dynamo``), its documentation in ruff's order, the
fixers that apply, and Fixit-style examples that the test-suite checks (``invalid`` must be flagged,
``valid`` must not; each defines ``f`` and compiles it).

``fixed`` (TorchFix-style before/after) holds the rule's ``invalid`` hazard with the rule's own ``fix`` advice
applied, written as the advice literally says (the value computed at import and read as a global; the hazard in
the body of a ``torch.library.custom_op`` with a ``register_fake``; the lock or timer in the caller, outside the
compiled function).  They are checked twice: statically like ``valid`` (not flagged with the rule,
tests/test_rules.py), and on the installed torch (tests/test_fix_advice.py, the ``oracle`` marker, each example
in a fresh process): a BREAK rule's ``invalid`` examples must stop Dynamo under
``torch.compile(f, fullgraph=True, backend="eager")``, and every ``fixed`` example must compile there and return
what eager returns.  Every BREAK rule with ``invalid`` examples has a ``fixed`` one: advice that does not compile
when applied is wrong advice.

The convention for ``invalid`` / ``fixed`` examples run by that oracle: ``f`` is called as ``f(*inputs(x))`` with
``x = torch.arange(1.0, 5.0)`` (a float tensor of shape ``(4,)``; ``inputs`` is optional, ``lambda x: (x,)`` by
default: an example passes a host value in through it).  An optional ``change()`` changes the state that the
hazard reads (an environment variable, a global); both are called again after it and must still agree (for a
SILENT rule's ``invalid`` example with a ``change()``, they must then disagree: that is the hazard).  The
module-level ``f_c = torch.compile(f, fullgraph=True)`` is for the static analyzer (it marks the region); it is
lazy and the oracle never calls it, it compiles ``f`` itself.
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
    fixed: tuple = ()  # the invalid hazard with this rule's `fix` applied: must not be flagged, must compile
    family: str = field(default="", compare=False)

    def matches_call(self, qualname: str) -> bool:
        for pat in self.calls:
            if pat.endswith(".*"):
                if qualname.startswith(pat[:-1]):
                    return True
            elif qualname == pat:
                return True
        return False

    def outcome_for(self, callee: str, verdicts=None) -> str:
        """The predicted Dynamo outcome for this callee: what the measured table says it does (exception, first
        message line, graph-break id, the C function it stops at) if it stops Dynamo there, else the rule's own.
        A stop location measured on the corpus (``CALLEE_STOPS``) completes it when its graph-break id agrees."""
        from .dynamo.model import GB_MESSAGES, callee_stop

        stop = callee_stop(callee) if callee else None
        measured = verdicts.lookup(callee) if verdicts is not None and callee else None
        if measured is not None and measured.stops:
            where = measured.where
            if stop is not None and stop[0] == measured.gb and stop[1].startswith(where):
                where = stop[1]  # the same stop, said with where it happens ("... in subprocess.Popen.__init__")
            return DynamoOutcome(measured.exception, measured.gb, measured.message, where).describe()
        if self.dynamo.exception and stop is not None:
            gb, where = stop
            return DynamoOutcome(self.dynamo.exception, gb, GB_MESSAGES.get(gb, self.dynamo.message),
                                 where).describe()
        return self.dynamo.describe()

    def measured_callees(self) -> tuple:
        """The callees this rule names (``with`` blocks as ``Type.__enter__``), as the probes key them."""
        return tuple(self.calls) + tuple(f"{t}.__enter__" for t in self.enters)

    def measured_section(self, verdicts=None) -> list:
        """Lines saying what the measured table records for each callee this rule names."""
        if verdicts is None:
            from .dynamo.verdicts import load_verdicts

            verdicts = load_verdicts(None)
        names = self.measured_callees()
        if verdicts is None or not names:
            return []
        lines = ["", f"## Measured Dynamo outcome (torch {verdicts.torch}, a direct call under fullgraph=True)"]
        for name in names:
            v = verdicts.get(name)
            if v is None:
                lines.append(f"- `{name}`: not measured")
            elif v.stops:
                lines.append(f"- `{name}`: {DynamoOutcome(v.exception, v.gb, v.message, v.where).describe()}")
            elif v.compiles:
                baked = " (value baked: later changes unseen)" if v.baked else ""
                lines.append(f"- `{name}`: compiles{baked}" + ("; not reported" if self.kind == BREAK else ""))
            else:
                lines.append(f"- `{name}`: {v.outcome}")
        return lines

    def documentation(self, verdicts=None) -> str:
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
        ] + self.measured_section(verdicts)
        return "\n".join(lines) + "\n"
