"""Library mode against the GPU: FlashInfer 0.7.2.post1's public APIs run on an NVIDIA H200 (SM90, torch
2.11.0+cu130), eagerly and under ``torch.compile(fullgraph=True)``, one fresh process each.  The results are
``gpu_truth/libmode-oracle-round{1,2}.jsonl``, copied from the project's shared GPU harness
(``shared/gpu/libmode/``, whose ``compare.py`` this follows; round 2 overrides round 1 for a case).

Truth per API: eager ran and fullgraph compiled -> safe; eager ran and fullgraph raised -> unsafe, stopped at
the innermost FlashInfer frame; eager failed or timed out -> no truth.  Branch probes (``api[variant]``) are
not counted.  compile-lint's side is its library-mode table (``compile_lint.library.verdicts``): an API is
predicted unsafe when it is ``unsafe`` or ``unsafe-if``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

TRUTH_DIR = Path(__file__).parent / "gpu_truth"
# how the scan is set up to match the machine the truth was measured on
TARGET_ARCH, CUDA_VERSION = "sm90", "13.0"
TORCH_VERSION = "2.11"  # the GPU machine's torch: the scan reads the verdicts measured on it (--torch-version)
# what the GPU machine lacks (--not-installed): it has torch, triton, nvcc and ninja, and the bundle carries only
# flashinfer and apache-tvm-ffi (shared/gpu/README.md, make-bundle.sh) -- no nvidia-cutlass-dsl, so FlashInfer's
# CuTe-DSL imports fail and norm falls back to its CUDA JIT kernels, whose loader is where Dynamo stopped
NOT_INSTALLED = ("cutlass",)


def innermost_frames(directory: Path = TRUTH_DIR) -> dict:
    """{api: "path:line" of the innermost frame of Dynamo's stop, in whatever file (``pynvml.py:2980`` where
    FlashInfer's innermost frame is its call into pynvml, ``<python>/pathlib.py:842``)} for the unsafe APIs."""
    recs: dict = {}
    for fn in sorted(directory.glob("libmode-oracle-round*.jsonl")):
        for line in fn.read_text().splitlines():
            r = json.loads(line)
            if r.get("mode") == "case" and "[" not in r["case"]:
                recs[r["case"]] = r
    out = {}
    for r in recs.values():
        inner = (r.get("fullgraph_error") or {}).get("innermost_any")
        if r.get("eager") == "ok" and r.get("fullgraph") not in (None, "COMPILES") and inner:
            out[r["api"]] = inner.rsplit(":", 1)[0]
    return out


def load_truth(directory: Path = TRUTH_DIR) -> dict:
    """{api: (truth, "path:line" of Dynamo's stop or None)} for the APIs with a truth."""
    recs: dict = {}
    for fn in sorted(directory.glob("libmode-oracle-round*.jsonl")):
        for line in fn.read_text().splitlines():
            r = json.loads(line)
            if r.get("mode") == "case" and "[" not in r["case"]:
                recs[r["case"]] = r  # later rounds override earlier ones
    out = {}
    for r in recs.values():
        if r.get("eager") != "ok" or r.get("fullgraph") is None:
            continue
        if r["fullgraph"] == "COMPILES":
            out[r["api"]] = ("safe", None)
        else:
            stop = (r.get("fullgraph_error") or {}).get("innermost_fi")
            out[r["api"]] = ("unsafe", stop.rsplit(":", 1)[0] if stop else None)
    return out


@dataclass
class LibmodeScore:
    true_unsafe: int = 0
    false_unsafe: int = 0
    true_safe: int = 0
    missed_unsafe: int = 0
    first_is_stop: int = 0  # unsafe APIs whose first shown hazard is the line Dynamo stopped at
    misses: list = field(default_factory=list)
    unlisted: list = field(default_factory=list)  # APIs with a GPU truth that library mode did not list
    wrong_first: list = field(default_factory=list)  # unsafe, rightly, but the first hazard shown is elsewhere

    @property
    def precision(self) -> float:
        n = self.true_unsafe + self.false_unsafe
        return self.true_unsafe / n if n else 1.0

    @property
    def recall(self) -> float:
        n = self.true_unsafe + self.missed_unsafe
        return self.true_unsafe / n if n else 1.0

    def line(self) -> str:
        unsafe = self.true_unsafe + self.missed_unsafe
        return (f"precision {100 * self.precision:.1f}% ({self.true_unsafe}/{self.true_unsafe + self.false_unsafe})"
                f" | recall {100 * self.recall:.1f}% ({self.true_unsafe}/{unsafe}) | first hazard = Dynamo's stop "
                f"{self.first_is_stop}/{unsafe} | true safe {self.true_safe}"
                + (f" | not listed {len(self.unlisted)}" if self.unlisted else ""))


def score(table: dict, truth: dict, rel, innermost: dict | None = None) -> LibmodeScore:
    """``table``: {api: ApiVerdict}; ``rel``: a finding's path relative to the site (``flashinfer/...``);
    ``innermost``: {api: the stop's innermost frame in any file} (``innermost_frames``): a first hazard shown
    there is Dynamo's stop too (get_gpu_memory_bandwidth's ``fn(flags)`` in pynvml, below FlashInfer's call)."""
    s = LibmodeScore()
    innermost = innermost or {}
    for api, (want, stop) in sorted(truth.items()):
        v = table.get(api)
        if v is None:
            s.unlisted.append(api)
            continue
        predicted = "safe" if v.safe else "unsafe"
        if predicted == want == "unsafe":
            s.true_unsafe += 1
            f = v.first_hazard
            shown = f"{rel(f.path)}:{f.line}"
            if stop is not None and shown == stop or shown == innermost.get(api):
                s.first_is_stop += 1
            else:
                s.wrong_first.append(f"{api}: first shown {shown} ({f.callee}), Dynamo stops at {stop}")
        elif predicted == "unsafe":
            s.false_unsafe += 1
            s.misses.append(f"{api}: predicted {v.status}, compiles on the H200")
        elif want == "unsafe":
            s.missed_unsafe += 1
            s.misses.append(f"{api}: predicted safe, Dynamo stops at {stop}")
        else:
            s.true_safe += 1
    return s
