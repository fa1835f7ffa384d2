"""Stored truth of the real-code suite: measure it (in fresh processes), store it, read it back.

    python tests/realcode/truth.py                    # re-measure every model, rewrite the stored truth
    python tests/realcode/truth.py --cases llama,t5   # re-measure some, keep the others' rows

The truth is one JSON file per pinned environment and torch version under ``tests/realcode/truth/``; the
harness (``harness.py``) runs with ``PYTHONPATH`` set to the pinned environment and this interpreter's torch.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/

from realcode.catalog import CASES, names_from  # noqa: E402
from realcode.env import env_label, env_root  # noqa: E402

TRUTH_DIR = HERE / "truth"
STORED_TORCH = "2.13.0"  # the torch version the stored truth was measured with (CPU wheel)


def truth_path(torch_version: str = STORED_TORCH) -> Path:
    return TRUTH_DIR / f"torch-{torch_version}+{env_label()}.json"


def load(path: Path | None = None) -> dict:
    """{case name: [rows]} of the stored truth, and the file's header under "_meta"."""
    data = json.loads((path or truth_path()).read_text())
    out: dict = {"_meta": {k: v for k, v in data.items() if k != "rows"}}
    for row in data["rows"]:
        out.setdefault(row["case"], []).append(row)
    return out


def measure(names: list, jobs: int = 2, timeout: float = 600, variants: str = "", python: str = sys.executable,
            quiet: bool = False) -> dict:
    """Run the harness on ``names`` in a subprocess; returns its output (``{"torch", "python", "rows"}``)."""
    root = env_root()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        env = dict(os.environ, PYTHONPATH=str(root), PYTHONWARNINGS="ignore", TOKENIZERS_PARALLELISM="false",
                   HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error", DIFFUSERS_VERBOSITY="error")
        cmd = [python, str(HERE / "harness.py"), "--env", str(root), "--cases", ",".join(names),
               "--out", str(out), "--jobs", str(jobs), "--timeout", str(timeout)]
        if variants:
            cmd += ["--variants", variants]
        proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL if quiet else None,
                              stderr=subprocess.PIPE if quiet else None, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"harness failed (rc={proc.returncode}): {(proc.stderr or '')[-2000:]}")
        return json.loads(out.read_text())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="re-measure the real-code suite's truth")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args(argv)
    names, unknown = names_from(a.cases)
    if unknown:
        print(f"unknown cases: {unknown}", file=sys.stderr)
        return 2
    print(f"wrote {store(measure(names, a.jobs, a.timeout), names)}")
    return 0


def store(measured: dict, names: list) -> Path:
    """Write the harness's output into the stored truth, keeping the rows of models not in ``names``."""
    torch_version = measured["torch"].split("+")[0]
    path = truth_path(torch_version)
    rows = [r for r in measured["rows"]]
    if path.exists() and set(names) != {c.name for c in CASES}:
        kept = [r for r in json.loads(path.read_text())["rows"] if r["case"] not in set(names)]
        rows = kept + rows
    order = {c.name: i for i, c in enumerate(CASES)}
    rows.sort(key=lambda r: order.get(r["case"], len(order)))
    for r in rows:
        r.pop("traceback", None)
        r.pop("wall_s", None)
        r.pop("compile_s", None)
    TRUTH_DIR.mkdir(exist_ok=True)
    header = {"torch": measured["torch"], "python": measured["python"], "environment": env_label(),
              "measured": date.today().isoformat(),
              "how": "tests/realcode/harness.py: eager forward under sys.setprofile, then torch.compile(model, "
                     "fullgraph=True, backend='eager'), then torch._dynamo.explain when it stopped"}
    compact = dict(sort_keys=True, separators=(",", ":"))
    # one row a line: a re-measured model shows in a diff as its own lines
    path.write_text(json.dumps(header, **compact)[:-1] + ',"rows":[\n'
                    + ",\n".join(json.dumps(r, **compact) for r in rows) + "\n]}\n")
    return path


if __name__ == "__main__":
    sys.exit(main())
