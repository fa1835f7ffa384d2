#!/usr/bin/env python
"""Dump torch._dynamo.trace_rules' decision data as JSON.

Run with an interpreter that has torch:

    python scripts/gen_trace_rules_snapshot.py                 # print JSON
    python scripts/gen_trace_rules_snapshot.py --out FILE      # write FILE
    python scripts/gen_trace_rules_snapshot.py --portable \
        --out lint/dynamo/data/trace_rules_snapshot.json       # the bundled snapshot
    python scripts/gen_trace_rules_snapshot.py --python /other/venv/bin/python ...

The dumping code is `DUMP_SOURCE` from lint/dynamo/trace_rules.py, loaded by
file path so this script needs neither compile_lint installed nor anything
but torch; the analyzer runs the very same source in a subprocess
(`python -c DUMP_SOURCE`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODULE_FILE = REPO / "lint" / "dynamo" / "trace_rules.py"

# Fields that only describe the machine that produced the dump.
MACHINE_FIELDS = (
    "python_executable",
    "torch_dir",
    "trace_rules_file",
    "trace_rules_mtime",
    "stdlib_dir",
    "site_dirs",
    "sys_path",
    "unittest_dir",
)


def _load_module():
    spec = importlib.util.spec_from_file_location("_compile_lint_trace_rules", MODULE_FILE)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses needs the module registered
    spec.loader.exec_module(mod)
    return mod


def make_portable(data: dict) -> dict:
    """Drop absolute paths so the snapshot doesn't describe the build machine."""
    data = dict(data)
    for k in MACHINE_FIELDS:
        data.pop(k, None)
    skip_dirs = []
    for e in data.get("skip_dirs", []):
        e = dict(e)
        if e.get("kind") in ("builtin", "thirdparty", "torch"):
            e["raw"] = e["rel"]
        elif e.get("kind") == "abs":
            continue
        skip_dirs.append(e)
    data["skip_dirs"] = skip_dirs
    data["thirdparty_skip_dirs"] = [
        {k: v for k, v in e.items() if k != "path"} for e in data.get("thirdparty_skip_dirs", [])
    ]
    data["builtin_inline_when_called"] = [
        dict(e, raw=e.get("rel") or e["raw"]) for e in data.get("builtin_inline_when_called", [])
    ]
    return data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="write here instead of stdout")
    ap.add_argument("--python", help="dump the torch of this interpreter (subprocess) instead of this one")
    ap.add_argument("--portable", action="store_true", help="strip machine-specific absolute paths")
    args = ap.parse_args(argv)

    mod = _load_module()
    if args.python:
        data = mod._run_python(args.python, mod.DUMP_SOURCE, mod.DUMP_TIMEOUT_S)
    else:
        ns: dict = {"__name__": "compile_lint_dump"}
        exec(compile(mod.DUMP_SOURCE, "<compile_lint dump>", "exec"), ns)
        data = ns["dump_trace_rules"]()
    if args.portable:
        data = make_portable(data)
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        print(
            f"wrote {args.out} ({len(text.encode()) // 1024} KiB): torch {data.get('torch_version')}, "
            f"{len(data.get('in_graph_functions', []))} in-graph functions, "
            f"{len(data.get('skip_functions', []))} skip functions, missing={data.get('missing')}",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
