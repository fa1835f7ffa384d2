"""Source text of the summaries' expressions (``summary.py``), for what a report says about a condition.

``source(expr)`` writes an expression back as Python (``"dynamic" in self.rope_type``); ``condition(guard)``
is the condition under which the guarded code runs (``self.merged is not None`` for the ``else`` of
``if self.merged is None:``).  Long texts are cut: a report line names a condition, it does not reprint it.
"""
from __future__ import annotations

from .summary import RAISES, Guard

_BINOPS = {"Add": "+", "Sub": "-", "Mult": "*", "Div": "/", "FloorDiv": "//", "Mod": "%", "Pow": "**",
           "BitAnd": "&", "BitOr": "|", "BitXor": "^", "LShift": "<<", "RShift": ">>", "MatMult": "@"}
_CMPS = {"Eq": "==", "NotEq": "!=", "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">=", "In": "in", "NotIn": "not in",
         "Is": "is", "IsNot": "is not"}
_NEGATED = {"Eq": "NotEq", "NotEq": "Eq", "Lt": "GtE", "GtE": "Lt", "Gt": "LtE", "LtE": "Gt", "In": "NotIn",
            "NotIn": "In", "Is": "IsNot", "IsNot": "Is"}
MAX_CHARS = 120


def source(e, depth: int = 0) -> str:
    if depth > 12:
        return "..."
    k = e[0]
    d = depth + 1
    if k == "name":
        return e[1]
    if k == "attr":
        return f"{source(e[1], d)}.{e[2]}"
    if k == "const":
        return repr(e[1])
    if k == "call":
        args = [source(a, d) for a in e[2]]
        args += [f"{n}={source(v, d)}" if n else f"**{source(v, d)}" for n, v in e[3]]
        return f"{source(e[1], d)}({', '.join(args)})"
    if k == "sub":
        return f"{source(e[1], d)}[{source(e[2], d)}]"
    if k == "not":
        return f"not {_atom(e[1], d)}"
    if k == "bool":
        return f" {e[1]} ".join(_atom(v, d) for v in e[2])
    if k == "cmp":
        return " ".join([source(e[1], d)] + [f"{_CMPS.get(op, op)} {source(r, d)}" for op, r in e[2]])
    if k == "binop":
        return f"{_atom(e[2], d)} {_BINOPS.get(e[1], e[1])} {_atom(e[3], d)}"
    if k == "seq":
        inner = ", ".join(source(x, d) for x in e[2])
        return {"list": f"[{inner}]", "set": f"{{{inner}}}"}.get(e[1], f"({inner}{',' if len(e[2]) == 1 else ''})")
    if k == "dict":
        return "{" + ", ".join(f"{source(a, d)}: {source(b, d)}" if a is not None else f"**{source(b, d)}"
                               for a, b in e[1]) + "}"
    if k == "ifexp":
        return f"{source(e[2], d)} if {source(e[1], d)} else {source(e[3], d)}"
    if k == "fstr":
        return "f'...'"
    if k == "starred":
        return f"*{source(e[1], d)}"
    if k == "func":
        return "lambda ..."
    if k == "raises":
        return f"import {', '.join(e[2])} fails"
    if k == "unknown" and len(e) > 1 and isinstance(e[1], str):
        return e[1]  # a condition the walk states in words (the try body raised, which callee runs)
    return "..."


def _atom(e, depth: int) -> str:
    text = source(e, depth)
    return f"({text})" if e[0] in ("bool", "ifexp", "cmp", "binop") and depth > 0 else text


def condition(g: Guard) -> str:
    """When the guarded code runs, as Python text."""
    if g.cond == RAISES:
        return "the try body raises"
    if g.cond[0] == "raises":
        return source(g.cond) if g.polarity else f"not ({source(g.cond)})"
    e = g.cond
    if not g.polarity:
        if e[0] == "not":
            e = e[1]
        elif e[0] == "cmp" and len(e[2]) == 1 and e[2][0][0] in _NEGATED:
            e = ("cmp", e[1], ((_NEGATED[e[2][0][0]], e[2][0][1]),))
        else:
            return _cut(f"not {_atom(e, 1)}")
    return _cut(source(e))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 3] + "..."
