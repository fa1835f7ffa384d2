"""`compile-lint graph --all` and PyCG on PyCG's call-graph micro-benchmark, in one run, side by side.

    python bench/callgraph_microbench.py                          # PyCG from PATH, if there
    python bench/callgraph_microbench.py --pycg /venv/bin/pycg    # this PyCG executable
    python bench/callgraph_microbench.py --pycg none              # compile-lint only

The benchmark (tests/data/pycg-micro-benchmark, vendored from vitsalis/PyCG) is 119 cases, each a small
program (``main.py`` and sometimes more modules) with its expected call graph (``callgraph.json``).  Each tool
analyses each case's folder (PyCG as its own tests run it: ``--package CASE CASE/main.py``; compile-lint with
the folder as import root and ``--no-environment``, so nothing installed on this machine takes part).

How the figures count, per tool:
- an *edge* is (caller, callee) of the adjacency list; nodes without edges do not count;
- precision = correct edges / edges reported, recall = correct edges / edges expected, both summed over
  every case (a case with many edges weighs more);
- per case, *sound* = no expected edge missing, *precise* = no reported edge that is not expected,
  *exact* = both (PyCG's own evaluation calls a case "complete" when it misses nothing and "sound" when
  it adds nothing; the words are spelled out here to avoid the two opposite conventions);
- names: PyCG writes builtins as ``<builtin>.len`` and methods of literals as ``<**PyStr**>.join``;
  compile-lint writes ``builtins.len`` and ``builtins.str.join``.  Expected graphs and PyCG's output are
  translated to compile-lint's spelling (a renaming only; no edge is added or dropped).
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNIPPETS = REPO / "tests" / "data" / "pycg-micro-benchmark" / "snippets"

# PyCG's names of the literal types whose methods it reports (``"a".join`` -> ``<**PyStr**>.join``)
_PYCG_LITERALS = {"PyStr": "str", "PyDict": "dict", "PyList": "list", "PySet": "set", "PyTuple": "tuple",
                  "PyInt": "int", "PyFloat": "float", "PyBytes": "bytes"}
_LITERAL = re.compile(r"^<\*\*(\w+)\*\*>\.")


def normalized(name: str) -> str:
    """A PyCG name in compile-lint's spelling: ``<builtin>.x`` -> ``builtins.x``, ``<**PyStr**>.m`` ->
    ``builtins.str.m``."""
    if name.startswith("<builtin>."):
        return "builtins." + name[len("<builtin>."):]
    m = _LITERAL.match(name)
    if m and m.group(1) in _PYCG_LITERALS:
        return f"builtins.{_PYCG_LITERALS[m.group(1)]}.{name[m.end():]}"
    return name


def edges(graph: dict, rename=lambda n: n) -> set:
    return {(rename(a), rename(b)) for a, callees in graph.items() for b in callees}


def cases(root: Path = SNIPPETS) -> list:
    """(category, case name, folder) of every case, sorted."""
    return sorted((d.parent.name, d.name, d) for d in root.glob("*/*") if (d / "callgraph.json").is_file())


def expected(case_dir: Path) -> set:
    return edges(json.loads((case_dir / "callgraph.json").read_text()), normalized)


def compile_lint_graph(case_dir: Path) -> dict:
    """`compile-lint graph --all --no-environment --search-path CASE CASE/*`, in this process.

    The case's folder is the import root, as PyCG's ``--package CASE`` makes it: a case that is itself a
    package (``imports/relative_import`` has an ``__init__.py``) still names its modules ``main``,
    ``nested.to_import``; so its entries are scanned with the folder as ``--search-path``."""
    from compile_lint.engine import ScanOptions
    from compile_lint.graph import build_graph

    entries = [str(p) for p in sorted(case_dir.iterdir())
               if p.name != "__init__.py" and (p.suffix == ".py" or p.is_dir() and p.name.isidentifier())]
    opts = ScanOptions(paths=entries, search_path=[str(case_dir)], use_environment=False, respect_gitignore=False,
                       jobs=1)
    return build_graph(opts, everything=True)


def pycg_graph(pycg: str, case_dir: Path):
    """PyCG's graph of the case, or None with why it failed (printed, never hidden)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.json"
        try:
            proc = subprocess.run([pycg, "--package", str(case_dir), str(case_dir / "main.py"), "-o", str(out)],
                                  capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return None, "timed out"
        if proc.returncode != 0 or not out.is_file():
            return None, (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
        return json.loads(out.read_text()), ""


class Tally:
    def __init__(self):
        self.reported = self.expected = self.correct = 0
        self.cases = self.sound = self.precise = self.exact = self.failed = 0

    def add(self, got, want: set) -> None:
        self.cases += 1
        if got is None:
            self.failed += 1
            self.expected += len(want)
            return
        hit = len(got & want)
        self.reported += len(got)
        self.expected += len(want)
        self.correct += hit
        self.sound += hit == len(want)
        self.precise += hit == len(got)
        self.exact += got == want

    @property
    def precision(self) -> float:
        return self.correct / self.reported if self.reported else 1.0

    @property
    def recall(self) -> float:
        return self.correct / self.expected if self.expected else 1.0

    def row(self) -> str:
        return (f"{100 * self.precision:5.1f}% {100 * self.recall:5.1f}%  {self.exact:>3}/{self.cases:<3}"
                f" {self.sound:>3} {self.precise:>3}")


def measure_compile_lint(selected: list, misses: list = None) -> dict:
    """category -> Tally of compile-lint's graphs; with ``misses`` a list, (case, missing, extra) are added."""
    tallies: dict = {}
    for cat, name, d in selected:
        want = expected(d)
        got = edges(compile_lint_graph(d))
        tallies.setdefault(cat, Tally()).add(got, want)
        if misses is not None and got != want:
            misses.append((f"{cat}/{name}", sorted(want - got), sorted(got - want)))
    return tallies


def total(tallies: dict) -> Tally:
    t = Tally()
    for x in tallies.values():
        for k in vars(t):
            setattr(t, k, getattr(t, k) + getattr(x, k))
    return t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pycg", metavar="PATH", help="PyCG executable (default: `pycg` on PATH; `none`: skip)")
    ap.add_argument("--cases", metavar="CATEGORY[/CASE],...", help="only these")
    ap.add_argument("--misses", action="store_true", help="list each case's missing and extra edges")
    a = ap.parse_args(argv)
    selected = cases()
    if a.cases:
        want = a.cases.split(",")
        selected = [c for c in selected if c[0] in want or f"{c[0]}/{c[1]}" in want]
        if not selected:
            print(f"no case matches {a.cases!r}", file=sys.stderr)
            return 2
    pycg = None if a.pycg == "none" else a.pycg or shutil.which("pycg")
    if pycg is not None and not Path(pycg).is_file():
        print(f"--pycg {pycg}: no such file", file=sys.stderr)
        return 2

    t0 = time.time()
    misses: list = []
    ours = measure_compile_lint(selected, misses)
    t_ours = time.time() - t0
    theirs: dict = {}
    pycg_errors: list = []
    t0 = time.time()
    if pycg is not None:
        for cat, name, d in selected:
            g, why = pycg_graph(pycg, d)
            if g is None:
                pycg_errors.append(f"{cat}/{name}: {why}")
            theirs.setdefault(cat, Tally()).add(None if g is None else edges(g, normalized), expected(d))
    t_pycg = time.time() - t0

    head = "precis. recall  exact  snd prc"
    print(f"{'category':<14} {'cases':>5}  {'compile-lint ' + head:<44}" + (f"  PyCG {head}" if pycg else ""))
    for cat in sorted(ours):
        line = f"{cat:<14} {ours[cat].cases:>5}  {'':13}{ours[cat].row():<31}"
        if pycg:
            line += f"  {'':5}{theirs[cat].row()}"
        print(line)
    to = total(ours)
    line = f"{'total':<14} {to.cases:>5}  {'':13}{to.row():<31}"
    if pycg:
        line += f"  {'':5}{total(theirs).row()}"
    print(line)
    print(f"\ncompile-lint: {to.correct} of {to.reported} edges reported are expected, {to.correct} of "
          f"{to.expected} expected edges found ({t_ours:.1f} s)")
    if pycg:
        tp = total(theirs)
        print(f"PyCG ({pycg}): {tp.correct} of {tp.reported} edges reported are expected, {tp.correct} of "
              f"{tp.expected} expected edges found ({t_pycg:.1f} s); {tp.failed} cases failed")
        for e in pycg_errors:
            print(f"  PyCG failed on {e}")
    else:
        print("PyCG was not measured: no `pycg` on PATH (give --pycg PATH)")
    if a.misses:
        for case, missing, extra in misses:
            print(f"\n{case}:")
            for e in missing:
                print(f"  missing {e[0]} -> {e[1]}")
            for e in extra:
                print(f"  extra   {e[0]} -> {e[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
