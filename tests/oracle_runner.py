"""Run one corpus case under torch.compile in this (fresh) process: its first stop, then every stop, in order.

Usage: python oracle_runner.py CASES_DIR CASE_NAME   -> prints one JSON line:
{"raised": bool, "exc": "torch._dynamo.exc.Unsupported", "first_line": "...", "gb": "GB0156",
 "innermost_case_frame": "c087_lock_acquire_release.py:11 (f)",
 "stops": [{"at": "c087_lock_acquire_release.py:11", "func": "f", "gb": "GB0156",
            "first_line": "Unsupported method call"}, ...],
 "skipped_frames": [...], "outside_case_breaks": 0, "eager_exc": null}

Round 1, the first stop: the case's own module-level ``f_compiled`` (``fullgraph=True, backend="eager"``) is
called once; an exception is the measurement (class, first message line, GB id from the message, and the
innermost frame of its traceback in the case's own files: ``cases/`` and ``cases/helpers_pkg/``).
``setup()`` runs first when the case defines it.

Every later stop.  The issue's way is to neutralise the first stop (make its call opaque to Dynamo) and run
again, until the case compiles.  Making a call opaque to Dynamo is exactly what a graph break does: under
``fullgraph=False`` Dynamo compiles the graph up to the unsupported call, runs that call eagerly, and resumes
tracing after it (a callee that the call runs eagerly is itself a fresh frame that Dynamo traces).  So when
round 1 raised, the same process resets Dynamo and calls the case's ``f`` (``f_compiled``'s original) once under
``torch.compile(f, backend="eager")`` with Dynamo's graph-break log on (``torch._logging.set_logs(
graph_breaks=True)``, ``torch._dynamo.config.verbose`` so that a repeated break keeps its user stack): every
graph break, in the order Dynamo met it, with its user-code traceback.  A break becomes a stop at its innermost
frame in the case's own files (``file:line``, the function, the GB id, the reason's first line); a break whose
traceback has no frame in the case's files (Dynamo tracing a stdlib frame that an eager call entered, such as
``subprocess.Popen.__init__``) is only counted (``outside_case_breaks``); a break at a place already listed is a
re-encounter, not a new stop; a break whose message carries Dynamo's hint "This graph break may have been caused by
an earlier graph break" (``Reconstruction failure`` at a resume point, a break in a loop) is the graph-break
machinery's own consequence, which a fixed program would not meet: not a stop.  Rewriting the source instead (wrapping the stopping statement in a disabled
thunk) would need a rule per statement form (``with open(p) as fh:``, ``p = Popen(...)``, a condition) and
would measure the rewrite; the graph break is Dynamo's own neutralisation.  One difference from a fixed program
under fullgraph is removed: outside fullgraph Dynamo does not trace a frame with "no tensor-related objects"
(``convert_frame.has_tensor_in_frame``: e.g. the eagerly run ``JitSpec.build(self)`` of c065, or the resume
function after a break in it), where under fullgraph that frame is inlined and its stops are stops; for this
run, every function frame (not a module body, which an import runs) whose code is in the case's own files
counts as one to trace (c065's ``mkdir`` and
``write_text`` at flashinfer_like.py:38-39 are measured only so).

Two things a single run cannot see, both recorded rather than guessed: Dynamo sometimes cannot resume after a
break (a break inside a ``with`` block, a loop, or a value it cannot reconstruct: "Skipping the function and
falling back to eager") and runs the rest of that frame, and what it calls, eagerly, untraced:
``skipped_frames`` lists each (the frame Dynamo was tracing, as the outermost case frame of that attempt, and
the break's place): a hazard reached only from there was not measured; and an eager call can raise (``eager_exc``:
nothing after it ran).  The first stop of this run is the fullgraph stop of round 1 on every corpus case
(tests/test_oracle.py asserts it), which is the check that the two runs measure the same program.
"""
import atexit
import importlib
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import warnings

GB_RE = re.compile(r"\bgb(\d{4})\b", re.IGNORECASE)
FRAME_RE = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)', re.MULTILINE)
RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(.+?)_at_\d+$")
SKIPPED_RE = re.compile(r"Skipping the (?:function|frame)|frame skipped", re.IGNORECASE)
GRAPH_BREAKS_LOGGER = "torch._dynamo.symbolic_convert.__graph_breaks"
# Dynamo's own hint (graph_break_hints.CAUSED_BY_EARLIER_GRAPH_BREAK) on a break that the graph-break machinery
# itself causes (a value it cannot reconstruct at a resume point, a break inside a loop): not a stop of the case.
CONSEQUENCE = "may have been caused by an earlier graph break"
TRACING_STARTED = "most recent `torch.compile` tracing attempt started here"


def _gb(text: str):
    m = GB_RE.search(text or "")
    return f"GB{m.group(1)}" if m else None


def _first_message_line(reason: str) -> str:
    """The reason's own first line: Dynamo prefixes a graph break's message with a line ending in ':' ("Encountered
    graph break when attempting to trace CALL: ...:", "Failed to handle graph break gracefully. ...:")."""
    lines = [ln.strip() for ln in reason.strip().splitlines() if ln.strip()]
    if len(lines) > 1 and lines[0].endswith(":"):
        return lines[1]
    return lines[0] if lines else ""


class _CaseFiles:
    def __init__(self, cases_dir: str):
        self.root = os.path.realpath(cases_dir) + os.sep

    def rel(self, filename: str):
        """``c087_x.py`` / ``helpers_pkg/jit_env.py`` for a file under the cases folder, else None."""
        real = os.path.realpath(filename)
        return real[len(self.root):].replace(os.sep, "/") if real.startswith(self.root) else None

    def in_case(self, frames) -> list:
        """[(rel, line, func)] of ``frames`` [(filename, line, func)] in the case's files, outermost first; a
        resumed frame (``torch_dynamo_resume_in_f_at_11``) is named as its function (``f``)."""
        out = []
        for filename, line, func in frames:
            rel = self.rel(filename)
            while rel and RESUME_RE.match(func):
                func = RESUME_RE.match(func).group(1)
            if rel:
                out.append((rel, int(line), func))
        return out

    def innermost(self, frames):
        """(rel, line, func) of the innermost of ``frames`` in the case's files, or None."""
        inside = self.in_case(frames)
        return inside[-1] if inside else None


def _all_stops(fn, x, files: _CaseFiles) -> dict:
    """Call ``fn`` once under torch.compile(fullgraph=False) and read every graph break from Dynamo's log."""
    import torch

    records = []

    class _Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    import torch._dynamo.convert_frame as convert_frame

    has_tensor_in_frame = convert_frame.has_tensor_in_frame
    convert_frame.has_tensor_in_frame = lambda frame: (
        frame.f_code.co_name != "<module>" and bool(files.rel(frame.f_code.co_filename))) or has_tensor_in_frame(frame)
    torch._dynamo.reset()
    torch._logging.set_logs(graph_breaks=True)
    torch._dynamo.config.verbose = True  # a repeated break keeps its user stack (DuplicateWarningChecker)
    handler = _Keep()
    logging.getLogger(GRAPH_BREAKS_LOGGER).addHandler(handler)
    eager_exc = None
    try:
        torch.compile(fn, backend="eager")(x)
    except Exception as e:  # noqa: BLE001 - an eager call raised: nothing after it ran
        # the case folder's own path is the checkout's, not the measurement's: written as cases/
        first = (str(e).strip().splitlines() or [""])[0].replace(files.root, "cases" + os.sep)
        eager_exc = f"{type(e).__qualname__}: {first}"
    finally:
        logging.getLogger(GRAPH_BREAKS_LOGGER).removeHandler(handler)
        torch._logging.set_logs()
        torch._dynamo.config.verbose = False
        convert_frame.has_tensor_in_frame = has_tensor_in_frame
    stops, skipped, outside, seen = [], [], 0, set()
    for msg in records:
        head, _, reason = msg.partition("Graph Break Reason: ")
        reason = reason.split("\nUser code traceback:")[0].split("\nStack variable source attribution:")[0]
        user = msg.split(TRACING_STARTED, 1)[-1].split("\nNOTE: the most recent", 1)[0]
        inside = files.in_case(FRAME_RE.findall(user))
        if not inside:
            outside += 1
            continue
        where = inside[-1]
        stop = {"at": f"{where[0]}:{where[1]}", "func": where[2], "gb": _gb(reason),
                "first_line": _first_message_line(reason)}
        if SKIPPED_RE.search(reason.split("\n", 1)[0]):
            # The frame Dynamo gives up on is the one it was tracing: the outermost of this attempt's frames.
            top = inside[0]
            skip = {"frame": f"{top[0]}:{top[1]} ({top[2]})", "at": stop["at"], "gb": stop["gb"],
                    "first_line": stop["first_line"]}
            if skip not in skipped:
                skipped.append(skip)
        if CONSEQUENCE in reason:
            continue
        if stop["at"] not in seen:
            seen.add(stop["at"])
            stops.append(stop)
    return {"stops": stops, "skipped_frames": skipped, "outside_case_breaks": outside, "eager_exc": eager_exc}


def measure(cases_dir: str, name: str) -> dict:
    # made even when the parent gives CASE_TMP: the call also fixes tempfile's default directory, and Dynamo
    # stops elsewhere in a case's tempfile.mkdtemp() before that (GB0156 instead of GB0007 in c045, torch
    # 2.13): tests/corpus_stops.json was measured after it.  Removed on exit.
    made = tempfile.mkdtemp(prefix="ct_case_")
    atexit.register(shutil.rmtree, made, True)
    os.environ.setdefault("CASE_TMP", made)
    sys.path.insert(0, cases_dir)
    warnings.simplefilter("ignore")
    import torch

    files = _CaseFiles(cases_dir)
    mod = importlib.import_module(name)
    if hasattr(mod, "setup"):
        mod.setup()
    x = torch.randn(4, 4)
    out = {"raised": False, "exc": None, "first_line": None, "gb": None, "innermost_case_frame": None,
           "stops": [], "skipped_frames": [], "outside_case_breaks": 0, "eager_exc": None}
    try:
        mod.f_compiled(x)
    except Exception as e:  # noqa: BLE001 - any exception is the measurement
        stack = getattr(e, "real_stack", None) or []
        where = files.innermost((fr.filename, fr.lineno, fr.name) for fr in stack)
        out.update(raised=True, exc=f"{type(e).__module__}.{type(e).__qualname__}",
                   first_line=(str(e).strip().splitlines() or [""])[0], gb=_gb(str(e)),
                   innermost_case_frame=f"{where[0]}:{where[1]} ({where[2]})" if where else None)
    if out["raised"]:
        # A case that compiles under fullgraph=True has no graph break: no stop.  One that raised: every stop.
        fn = getattr(mod.f_compiled, "_torchdynamo_orig_callable", None) or mod.f
        out.update(_all_stops(fn, x, files))
    return out


def run_fresh(cases_dir, name: str, tmp) -> dict:
    """:func:`measure` one case in a fresh interpreter (its own CASE_TMP and working directory under ``tmp``), as
    the corpus was measured; ``{"crashed": True, "stderr": ...}`` when it dies without answering."""
    import subprocess
    from pathlib import Path

    work = Path(tmp) / name
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CASE_TMP=str(work), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), str(cases_dir), name], capture_output=True,
                          text=True, timeout=300, env=env, cwd=work)
    if proc.returncode != 0 or not proc.stdout.strip():
        return {"crashed": True, "stderr": proc.stderr[-2000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def stops_of(result: dict) -> dict:
    """The part of a measurement that tests/corpus_stops.json keeps for a case."""
    return {k: result[k] for k in ("stops", "skipped_frames", "eager_exc")}


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1], sys.argv[2])))
