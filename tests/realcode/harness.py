"""Measure the truth of real models: what Dynamo does with them, and which library functions run.

Run by ``tests/realcode/truth.py`` (never imported by the analyzer) with ``PYTHONPATH`` set to the pinned
environment (``env.py``)::

    python tests/realcode/harness.py --env ENV_ROOT --cases llama,bert --out rows.json [--jobs 2]

The process imports torch, transformers and diffusers once, then forks one child per (model, variant): each
child starts from a process that has never compiled anything (Dynamo's caches are empty), builds the model,
and measures:

- ``executed``: every Python function of the environment entered during one eager forward
  (``sys.setprofile``), as ``[path relative to the environment, first line, qualified name]``;
- ``fullgraph``: ``torch._dynamo.reset()`` then ``torch.compile(model, fullgraph=True, backend="eager")``:
  ``compiles``, or the exception's class, first line, graph-break id and the user stack Dynamo printed (its
  innermost frame inside the environment is the *stop*);
- ``traced``: the functions Dynamo itself traced (each inlined frame, hooked at
  ``InliningInstructionTranslator.__init__``, plus the root frame);
- ``breaks``: when fullgraph stopped, ``torch._dynamo.explain`` in default mode lists *every* graph break,
  each with its reason and innermost environment frame (so every stop of a model is measured, not only the
  first), and what Dynamo traced around them.

A child that crashes or runs past ``--timeout`` becomes a row that says so.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: for realcode.catalog

from realcode.catalog import BY_NAME, ModelCase, Variant  # noqa: E402

_COMPREHENSIONS = ("<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>")
_GB = re.compile(r"\bgb(\d{4})\b", re.IGNORECASE)  # "GB0291", or the registry URL's "gb/gb0291.html"
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


# ----------------------------------------------------------------------------- inputs
def _tokens(torch, model, cfg, case):
    vocab = getattr(cfg, "vocab_size", 99)
    return {"input_ids": torch.randint(3, vocab, (2, 7)), "attention_mask": torch.ones(2, 7, dtype=torch.long)}


def _encdec(torch, model, cfg, case):
    out = _tokens(torch, model, cfg, case)
    out["decoder_input_ids"] = torch.randint(3, cfg.vocab_size, (2, 5))
    return out


def _whisper(torch, model, cfg, case):
    return {"input_features": torch.randn(1, cfg.num_mel_bins, 2 * cfg.max_source_positions),
            "decoder_input_ids": torch.tensor([[1, 2, 3]])}


def _pixels(torch, model, cfg, case):
    size = cfg.image_size if isinstance(cfg.image_size, int) else cfg.image_size[0]
    return {"pixel_values": torch.randn(2, getattr(cfg, "num_channels", 3), size, size)}


def _unet2d_condition(torch, model, cfg, case):
    return {"sample": torch.randn(2, 4, 16, 16), "timestep": torch.tensor([10]),
            "encoder_hidden_states": torch.randn(2, 4, 8)}


def _unet2d(torch, model, cfg, case):
    return {"sample": torch.randn(2, 3, 16, 16), "timestep": torch.tensor([10])}


def _vae(torch, model, cfg, case):
    return {"sample": torch.randn(1, 3, 16, 16)}


def _flux(torch, model, cfg, case, ids_3d=False):
    h = w = 4
    seq = 6
    img_ids = torch.randn(h * w, 3)
    txt_ids = torch.randn(seq, 3)
    if ids_3d:
        img_ids, txt_ids = img_ids[None], txt_ids[None]
    return {"hidden_states": torch.randn(1, h * w, 4), "encoder_hidden_states": torch.randn(1, seq, 32),
            "pooled_projections": torch.randn(1, 32), "img_ids": img_ids, "txt_ids": txt_ids,
            "timestep": torch.tensor([1.0])}


def _sd3(torch, model, cfg, case):
    return {"hidden_states": torch.randn(1, 4, 8, 8), "encoder_hidden_states": torch.randn(1, 6, 32),
            "pooled_projections": torch.randn(1, 64), "timestep": torch.tensor([10])}


def _pixart(torch, model, cfg, case):
    return {"hidden_states": torch.randn(1, 4, 8, 8), "encoder_hidden_states": torch.randn(1, 6, 8),
            "timestep": torch.tensor([10]), "added_cond_kwargs": {"aspect_ratio": None, "resolution": None}}


def _dit(torch, model, cfg, case):
    return {"hidden_states": torch.randn(1, 4, 8, 8), "timestep": torch.tensor([10]),
            "class_labels": torch.tensor([1])}


def _cogvideox(torch, model, cfg, case):
    return {"hidden_states": torch.randn(1, 2, 4, 8, 8), "encoder_hidden_states": torch.randn(1, 8, 8),
            "timestep": torch.tensor([10])}


def _sana(torch, model, cfg, case):
    return {"hidden_states": torch.randn(1, 4, 8, 8), "encoder_hidden_states": torch.randn(1, 6, 8),
            "timestep": torch.tensor([10])}


def _wan(torch, model, cfg, case):
    return {"hidden_states": torch.randn(1, 4, 2, 8, 8), "encoder_hidden_states": torch.randn(1, 6, 16),
            "timestep": torch.tensor([10])}


INPUTS = {
    "tokens": _tokens, "encdec": _encdec, "whisper": _whisper, "pixels": _pixels,
    "unet2d_condition": _unet2d_condition, "unet2d": _unet2d, "vae": _vae, "flux": _flux,
    "flux_3d_ids": lambda *a: _flux(*a, ids_3d=True), "sd3": _sd3, "pixart": _pixart, "dit": _dit,
    "cogvideox": _cogvideox, "sana": _sana, "wan": _wan,
}


# ----------------------------------------------------------------------------- measuring
def _import(dotted: str):
    mod, _, name = dotted.partition(":")
    return getattr(importlib.import_module(mod), name)


class _Where:
    """Maps a code object's file to its path inside the environment (None: not the environment's code)."""

    def __init__(self, env_root: str):
        self.root = os.path.realpath(env_root) + os.sep
        self._memo: dict = {}

    def rel(self, filename: str):
        r = self._memo.get(filename, 0)
        if r == 0:
            real = os.path.realpath(filename)
            r = real[len(self.root):] if real.startswith(self.root) else None
            self._memo[filename] = r
        return r

    def code_key(self, code):
        rel = self.rel(code.co_filename)
        if rel is None or code.co_name in _COMPREHENSIONS:
            return None
        return (rel, code.co_firstlineno, code.co_qualname)

    def frames(self, frames) -> list:
        """[(path, line, function)] with environment paths made relative; others kept as they are."""
        out = []
        for filename, line, name in frames:
            rel = self.rel(filename)
            out.append({"path": rel if rel is not None else filename, "line": int(line), "function": name,
                        "in_env": rel is not None})
        return out


def _user_frames(exc) -> list:
    """The user stack of a Dynamo exception: its ``real_stack`` when it has one, else the frames printed after
    'from user code:' in the message (innermost last)."""
    stack = getattr(exc, "real_stack", None)
    if stack:
        return [(f.filename, f.lineno, f.name) for f in stack]
    text = str(exc)
    _, _, tail = text.partition("from user code:")
    return [(m.group(1), m.group(2), m.group(3)) for m in _FRAME.finditer(tail)]


def _stop_of(frames: list):
    inside = [f for f in frames if f["in_env"]]
    return {k: inside[-1][k] for k in ("path", "line", "function")} if inside else None


def _first_line(text: str) -> str:
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def _describe(exc, where: _Where) -> dict:
    frames = where.frames(_user_frames(exc))
    gb = _GB.search(str(exc))
    return {"outcome": "stops", "exception": f"{type(exc).__module__}.{type(exc).__qualname__}",
            "message": _first_line(exc), "gb": f"GB{gb.group(1)}" if gb else None, "stop": _stop_of(frames),
            "stack": [[f["path"], f["line"]] for f in frames if f["in_env"]]}


def _hook_tracer(torch, where: _Where, traced: set):
    """Record every frame Dynamo traces (the root and each inlined call)."""
    from torch._dynamo import symbolic_convert as sc

    def wrap(cls):
        orig = cls.__init__

        def init(self, *a, **k):
            orig(self, *a, **k)
            key = where.code_key(self.f_code)
            if key is not None:
                traced.add(key)

        cls.__init__ = init

    wrap(sc.InstructionTranslator)
    wrap(sc.InliningInstructionTranslator)


def _build(torch, case: ModelCase, variant: Variant):
    model_cls = _import(case.model)
    torch.manual_seed(0)
    if case.config is not None:
        cfg = _import(case.config)(**{**case.kwargs, **variant.config})
        model = model_cls(cfg)
    else:
        model = model_cls(**{**case.kwargs, **variant.config})
        cfg = model.config
    if variant.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    model.train() if variant.train else model.eval()
    inputs = INPUTS[variant.inputs or case.inputs](torch, model, cfg, case)
    inputs.update(variant.kwargs)
    return model, inputs


def measure(case: ModelCase, variant: Variant, env_root: str) -> dict:
    import torch

    torch.set_num_threads(1)
    where = _Where(env_root)
    row = {"case": case.name, "variant": variant.name, "entry": case.entry}
    try:
        model, inputs = _build(torch, case, variant)
    except Exception as e:  # the row says why the model could not be built on CPU
        row["error"] = f"build: {type(e).__name__}: {_first_line(e)}"
        return row
    grad = torch.enable_grad if variant.train else torch.no_grad

    executed: set = set()
    callers: dict = {}  # function -> (the nearest calling function of the environment, its line)

    def profile(frame, event, arg):
        if event == "call":
            key = where.code_key(frame.f_code)
            if key is not None and key not in executed:
                executed.add(key)
                up = frame.f_back
                while up is not None:  # through torch's nn.Module.__call__ and the like
                    caller = where.code_key(up.f_code)
                    if caller is not None:
                        callers[key] = (caller, up.f_lineno)
                        break
                    up = up.f_back

    try:
        with grad():
            sys.setprofile(profile)
            try:
                torch.manual_seed(0)
                model(**inputs)
            finally:
                sys.setprofile(None)
    except Exception as e:
        row["error"] = f"eager: {type(e).__name__}: {_first_line(e)}"
        return row
    row["executed"] = sorted(executed)
    row["callers"] = sorted([list(k), list(c), line] for k, (c, line) in callers.items())

    traced: set = set()
    _hook_tracer(torch, where, traced)
    torch._dynamo.reset()
    t0 = time.perf_counter()
    try:
        with grad():
            torch.manual_seed(0)
            torch.compile(model, fullgraph=True, backend="eager")(**inputs)
        row["fullgraph"] = {"outcome": "compiles"}
    except Exception as e:
        row["fullgraph"] = _describe(e, where)
    row["compile_s"] = round(time.perf_counter() - t0, 2)

    if row["fullgraph"]["outcome"] != "compiles":
        torch._dynamo.reset()
        try:
            with grad():
                torch.manual_seed(0)
                explained = torch._dynamo.explain(model)(**inputs)
            breaks = []
            for br in explained.break_reasons:
                frames = where.frames([(f.filename, f.lineno, f.name) for f in (br.user_stack or [])])
                gb = _GB.search(str(br.reason))
                breaks.append({"reason": _first_line(br.reason), "gb": f"GB{gb.group(1)}" if gb else None,
                               "stop": _stop_of(frames),
                               "stack": [[f["path"], f["line"]] for f in frames if f["in_env"]]})
            row["breaks"] = breaks
        except Exception as e:
            row["breaks_error"] = f"{type(e).__name__}: {_first_line(e)}"
    row["traced"] = sorted(traced)
    return row


# ----------------------------------------------------------------------------- driver
def _child(case, variant, env_root, out_path):
    try:
        row = measure(case, variant, env_root)
    except BaseException as e:  # anything else is a harness failure, reported as the row
        row = {"case": case.name, "variant": variant.name, "entry": case.entry,
               "error": f"harness: {type(e).__name__}: {_first_line(e)}",
               "traceback": traceback.format_exc()[-2000:]}
    with open(out_path, "w") as fh:
        json.dump(row, fh)


def run(cases: list, env_root: str, jobs: int, timeout: float, log=None) -> list:
    import torch  # noqa: F401  (imported once, before the forks)
    import transformers  # noqa: F401
    import diffusers  # noqa: F401

    work = [(c, v) for c in cases for v in c.all_variants()]
    tmp = tempfile.mkdtemp(prefix="realcode-")
    running: dict = {}  # pid -> (case, variant, out path, started)
    rows: list = []
    while work or running:
        while work and len(running) < jobs:
            case, variant = work.pop(0)
            out_path = os.path.join(tmp, f"{case.name}.{variant.name}.json")
            pid = os.fork()
            if pid == 0:  # the child: measure, write, leave without running the parent's cleanup
                try:
                    _child(case, variant, env_root, out_path)
                finally:
                    os._exit(0)
            running[pid] = (case, variant, out_path, time.monotonic())
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            for p, (case, variant, _, started) in list(running.items()):
                if time.monotonic() - started > timeout:
                    os.kill(p, signal.SIGKILL)
            time.sleep(0.05)
            continue
        case, variant, out_path, started = running.pop(pid)
        try:
            with open(out_path) as fh:
                row = json.load(fh)
        except (OSError, ValueError):
            why = f"timed out after {timeout:.0f} s" if time.monotonic() - started > timeout else \
                f"child died (status {status})"
            row = {"case": case.name, "variant": variant.name, "entry": case.entry, "error": f"harness: {why}"}
        row["wall_s"] = round(time.monotonic() - started, 1)
        rows.append(row)
        if log:
            log(row)
    order = {(c.name, v.name): i for i, (c, v) in enumerate((c, v) for c in cases for v in c.all_variants())}
    return sorted(rows, key=lambda r: order[(r["case"], r["variant"])])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", required=True, help="the pinned environment's root (tests/realcode/env.py)")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--variants", default="", help="comma-separated variant names to keep (default: all)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--partial", action="store_true", help="also append each row to OUT.partial as it is measured")
    a = ap.parse_args(argv)
    names = [n for n in a.cases.split(",") if n] or list(BY_NAME)
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        print(f"unknown cases: {unknown}", file=sys.stderr)
        return 2
    cases = [BY_NAME[n] for n in names]
    if a.variants:
        keep = set(a.variants.split(","))
        from dataclasses import replace

        cases = [replace(c, variants=tuple(v for v in c.variants if v.name in keep)) for c in cases]

    partial = open(a.out + ".partial", "a") if a.partial else None

    def log(row):
        if partial is not None:  # what was measured survives an interrupted run
            partial.write(json.dumps(row) + "\n")
            partial.flush()
        what = row.get("error") or row.get("fullgraph", {}).get("outcome")
        print(f"{row['case']:>20} {row['variant']:<22} {what}  ({row.get('wall_s')} s)", file=sys.stderr, flush=True)

    rows = run(cases, a.env, a.jobs, a.timeout, log)
    import torch

    out = {"torch": torch.__version__, "python": sys.version.split()[0], "rows": rows}
    Path(a.out).write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
