"""Bounds on the values the resolver makes, so that a cycle's rounds (fixpoint.py) settle.

A cycle feeds its value back into itself, and some values grow each time round:

- a name derived from an external object: sglang's ``ModelConfig`` stores ``self.hf_config =
  self.hf_text_config`` and ``self.hf_text_config = get_hf_text_config(self.hf_config)``, which returns
  ``config.thinker_config.text_config`` or ``config.llm_config``...: ``copy.deepcopy().llm_config.llm_config...``
  one attribute more per round; ``self.keys = self.keys.to(...)`` gives ``torch.tensor().to().to()...``;
- a container holding the container of the round before (``state = (state, x)``): one level deeper per round.

And one bound on what a call's context is told apart by (``argument_values``, applied where a call's arguments
are bound): an object an external call made, then reshaped, is that call; a tensor its methods made, one value.

Cut at a bound, the values of a cycle form a finite set, and its rounds reach a value the round before gave.
Without the bounds, solving every expression's cycle and giving the rounds room (``MAX_ROUNDS``) ran the bench
site's full scan out of memory (24 GB); with them it took 4.9 GB against the 7.35 GB of the scan that cut those
cycles (README, "Incremental rows", session 29).

The bounds keep what the rules and the walk read: a derived name keeps its type (what it was derived from, up to
the call or the class) and its last ``MAX_DERIVED_TAIL`` steps (``.item()``, ``.synchronize``, the method a
tensor chain ends with: ``model.tensor_type`` reads the last one); a container nested deeper than
``MAX_NESTING`` holds an unknown there.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

from ..arch import DEVICE_PROPERTIES
from ..dynamo import model
from ..values import DictVal, ExternalInstance, Namespace, Partial, SeqVal, TupleVal, Unknown

MAX_DERIVED_TAIL = 3  # steps kept after the type a name was derived from
MAX_NESTING = 4  # containers within containers

CONTAINERS = frozenset({DictVal, SeqVal, TupleVal, Namespace, Partial})  # value types holding value sets
_TOO_DEEP = Unknown("nested")
_ARGUMENT = Unknown("argument")
TENSOR_MADE = ExternalInstance("torch.Tensor.<method>()")  # a tensor one of its methods made, as an argument
# Python values made by an external call: a comparison of them is a bool (an environment read is a str or None)
SCALAR_TYPES = frozenset({"builtins.str", "builtins.int", "builtins.float", "builtins.bool", "os.environ.get()",
                          "os.getenv()"})


@lru_cache(maxsize=None)  # pure, and asked for every attribute of every external value
def derived_name(name: str) -> str:
    """``name`` with the steps after its type beyond the last ``MAX_DERIVED_TAIL`` left out: the type ends at
    the first call's result (``copy.deepcopy()``) or the first class (``transformers.PretrainedConfig``); a
    module path before it is never cut (``torch.nn.functional.scaled_dot_product_attention``)."""
    parts = name.split(".")
    for i, part in enumerate(parts):
        if part.endswith("()") or part[:1].isupper():
            break
    else:
        return name
    tail = len(parts) - i - 1
    if tail <= MAX_DERIVED_TAIL:
        return name
    return ".".join(parts[:i + 1] + parts[-MAX_DERIVED_TAIL:])


def nesting(v) -> int:
    """How many containers deep ``v`` is (0: not a container); kept on the value, which is frozen."""
    t = type(v)
    if t not in CONTAINERS:
        return 0
    d = v.__dict__
    n = d.get("_nesting")
    if n is None:
        if t is DictVal or t is Namespace:
            sets = [s for _, s in v.items]
        elif t is SeqVal:
            sets = [v.elems, *v.items]
        elif t is TupleVal:
            sets = list(v.items)
        else:  # Partial
            sets = [v.target, *v.args, *(s for _, s in v.kwargs)]
        n = d["_nesting"] = 1 + max((nesting(x) for s in sets for x in s), default=0)
    return n


def bounded_nesting(values: frozenset) -> frozenset:
    """``values`` with what lies deeper than ``MAX_NESTING`` containers an unknown (the outer containers kept:
    replacing the whole container, a round would start its growth again from nothing)."""
    for x in values:
        if type(x) in CONTAINERS and nesting(x) > MAX_NESTING:
            return frozenset(_truncated(y, MAX_NESTING) for y in values)
    return values


def _truncated(v, budget: int):
    if type(v) not in CONTAINERS or nesting(v) <= budget:
        return v
    if budget == 0:
        return _TOO_DEEP

    def cut(values: frozenset) -> frozenset:
        return frozenset(_truncated(x, budget - 1) for x in values)

    t = type(v)
    if t is DictVal:
        return DictVal(tuple((k, cut(s)) for k, s in v.items))
    if t is Namespace:
        return Namespace(tuple((k, cut(s)) for k, s in v.items))
    if t is SeqVal:
        return SeqVal(cut(v.elems), tuple(cut(s) for s in v.items))
    if t is TupleVal:
        return TupleVal(tuple(cut(s) for s in v.items))
    return Partial(cut(v.target), tuple(cut(s) for s in v.args), tuple((k, cut(s)) for k, s in v.kwargs))


def argument_values(values: frozenset) -> frozenset:
    """``values`` as a call's context keeps them: apart only where a reader of the value could tell them apart.
    An object an external call made, then reshaped (``torch.empty().view()``,
    ``aiter.gemm_a8w8_blockscale().new_empty().to().view()``), is the call that made it (``torch.empty()``): no
    model reads further into such a name (no rule's name holds a call's ``()``, and ``model.tensor_type`` takes
    no chain for a tensor that does not start with a tensor's method), but for two, kept whole: a device's
    properties (the arch's ``.major``) and a Python scalar.  A tensor one of its methods made
    (``torch.Tensor.abs().max()``, ``torch.Tensor.view()``) is one value, ``TENSOR_MADE``.  An unknown is one
    unknown (what made it is not read).  Every other value is kept as it is.

    sglang's attention backends (``forward_extend``) and fp8 linear helpers were worked out once per such
    chain their callers passed: hundreds of contexts each on the bench site, a sixth of the resolver's memo
    (1,062,053 entries; 883,555 now, and the same findings)."""
    # Every argument bound passes here, and most sets keep every value: those are returned as they are, without
    # building a set to compare (a tenth of the resolver's time, py-spy, when it did).
    for x in values:
        t = type(x)
        if t is Unknown:
            if x.why != _ARGUMENT.why:
                break
        elif t is ExternalInstance and _argument_instance(x.type) is not None:
            break
    else:
        return values
    # (a value found above to widen changes the set: no comparison needed)
    return frozenset(_ARGUMENT if type(x) is Unknown else _argument_instance(x.type) or x
                     if type(x) is ExternalInstance else x for x in values)


@lru_cache(maxsize=None)  # pure, and asked for every argument bound: keyed by the name (a str keeps its hash)
def _argument_instance(name: str) -> Optional[ExternalInstance]:
    """What an external instance of type ``name`` is as an argument; None: itself."""
    made = name.find("()") + 2
    if made < 2:
        return None  # no call made it (``pathlib.Path``, ``torch.Tensor``)
    if model.tensor_type(name):
        # a tensor one of its methods made: every reader of such a name, and of a name derived from it, takes it
        # alike (a tensor; a call's result, ``()``; what a method of it gives is told by that method's name)
        return TENSOR_MADE if name.startswith("torch.Tensor.") and name != TENSOR_MADE.type else None
    root = name[:made]
    if root == name or model.tensor_type(root) or root.endswith(DEVICE_PROPERTIES) or root in SCALAR_TYPES:
        return None  # the call itself, or read further: a tensor's chain, a device's properties, a Python scalar
    return ExternalInstance(root)
