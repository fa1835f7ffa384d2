"""Runs rule examples (``Rule.invalid`` / ``Rule.fixed``) under ``torch.compile`` on the installed torch, each in
a fresh process: this program imports torch once, then forks one child per example; the child executes the
example's source, compiles its ``f`` itself and reports through a pipe.  Used by tests/test_fix_advice.py.

The example convention (lint/ruledef.py): the source defines ``f``, called as ``f(*inputs(x))`` with
``x = torch.arange(1.0, 5.0)`` (``inputs`` defaults to ``lambda x: (x,)``); an optional ``change()`` changes
the state the hazard reads, after which both are called again.  A module-level
``f_c = torch.compile(f, fullgraph=True)`` is what the static analyzer sees; it is lazy (nothing compiles until
``f_c`` is called), and the runner never calls it: it compiles ``f`` with ``fullgraph=True, backend="eager"``.

stdin: a JSON list of ``[name, source]``; stdout: one JSON object ``{name: result}``, each result holding
``stops`` (the compiled call raised: ``exception``, ``message``), else ``equal`` (compiled == eager on the first
call) and, with a ``change``, ``equal_after``; ``error`` when the example itself failed (eager raised, no
``f``, the child died or hung)."""
import json
import os
import select
import signal
import sys
import traceback

CHILD_TIMEOUT_S = 120


def _same(a, b) -> bool:
    import torch

    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape \
            and a.dtype == b.dtype and bool(torch.equal(a, b))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b))
    return a == b


def _exec_example(name: str, src: str) -> dict:
    import torch

    torch._dynamo.reset()
    ns = {"__name__": f"compile_lint_example_{name.replace('-', '_')}"}
    try:
        exec(compile(src, f"<{name}>", "exec"), ns)
        f = ns["f"]
    except Exception as e:  # noqa: BLE001 -- reported, the test names it
        return {"error": f"the example does not run: {type(e).__name__}: {e}"}
    inputs = ns.get("inputs", lambda x: (x,))
    change = ns.get("change")
    x = torch.arange(1.0, 5.0)
    cf = torch.compile(f, fullgraph=True, backend="eager")
    try:
        got = cf(*inputs(x.clone()))
    except Exception as e:  # noqa: BLE001
        cls = type(e)
        return {"stops": True, "exception": f"{cls.__module__}.{cls.__qualname__}",
                "message": (str(e).strip().splitlines() or [""])[0]}
    out = {"stops": False}
    try:
        want = f(*inputs(x.clone()))
        out["equal"] = _same(got, want)
        if change is not None:
            change()
            got, want = cf(*inputs(x.clone())), f(*inputs(x.clone()))
            out["equal_after"] = _same(got, want)
    except Exception as e:  # noqa: BLE001
        out["error"] = f"after compiling: {type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"
    return out


def _fork(name: str, src: str):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a fresh Dynamo, the parent's imports
        try:
            os.close(r)
            os.dup2(2, 1)  # what the example prints goes to stderr: stdout carries the results
            signal.alarm(CHILD_TIMEOUT_S)
            res = _exec_example(name, src)
        except BaseException as e:  # noqa: BLE001
            res = {"error": f"{type(e).__name__}: {e}"}
        try:
            with os.fdopen(w, "w") as fh:
                fh.write(json.dumps(res))
        finally:
            os._exit(0)
    os.close(w)
    return pid, r


def run_all(examples, jobs: int) -> dict:
    """Each example in its own forked child, ``jobs`` children at a time; results keyed by name."""
    pending, running, results = list(examples), {}, {}
    while pending or running:
        while pending and len(running) < jobs:
            name, src = pending.pop(0)
            pid, fd = _fork(name, src)
            running[fd] = (name, pid, [])
        ready, _, _ = select.select(list(running), [], [])
        for fd in ready:
            name, pid, chunks = running[fd]
            data = os.read(fd, 1 << 16)
            if data:
                chunks.append(data)
                continue
            os.close(fd)
            del running[fd]
            _, status = os.waitpid(pid, 0)
            text = b"".join(chunks).decode()
            results[name] = json.loads(text) if text else {"error": f"the child died (wait status {status})"}
    return results


def main() -> None:
    examples = json.load(sys.stdin)
    import torch  # once, before forking
    import torch._dynamo

    # warm the imports that the first compile makes; each child then starts from torch._dynamo.reset()
    torch.compile(lambda t: t + 1, fullgraph=True, backend="eager")(torch.ones(1))
    torch._dynamo.reset()
    jobs = int(os.environ.get("COMPILE_LINT_ADVICE_JOBS") or min(2, os.cpu_count() or 1))
    sys.stdout.write(json.dumps(run_all(examples, jobs)))


if __name__ == "__main__":
    main()
