"""Incremental analysis (lint/incremental.py): after an edit, the result cache walks again only the regions
whose inputs changed -- and the findings are always those of a scan without any cache."""
from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compile_lint.engine import ScanOptions, scan
from compile_lint.report import to_json
from test_resolver_cycles import MUTUAL

HERE = Path(__file__).parent
CASES = HERE / "corpus" / "cases"


def _scan(root: Path, cache, **kw):
    opts = dict(paths=[root], use_environment=False, use_installed_torch=False, show_disabled=True,
                cache_dir=cache, use_result_cache=cache is not None, incremental=cache is not None)
    opts.update(kw)
    return scan(ScanOptions(**opts))


def _findings(result) -> list:
    return json.loads(to_json(result))["findings"]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # a new mtime even on a coarse clock


def _check(root: Path, cache: Path, **kw):
    """The incremental scan's findings equal a scan without cache; the incremental scan's result."""
    got = _scan(root, cache, **kw)
    want = _scan(root, None, **kw)
    assert _findings(got) == _findings(want)
    assert [r.label for r in got.regions] == [r.label for r in want.regions]
    again = _scan(root, cache, **kw)  # and the state it left answers the next run
    assert again.stats["result_cache"] == "hit" and _findings(again) == _findings(want)
    return got


def _project(tmp_path: Path, files: dict) -> tuple:
    """A project of ``files`` (relative path -> text) scanned once into a fresh cache: (root, cache, that
    first scan's result)."""
    root = tmp_path / "proj"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    cache = tmp_path / "cache"
    return root, cache, _scan(root, cache)


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "cases"
    shutil.copytree(CASES, root)
    cache = tmp_path / "cache"
    first = _scan(root, cache)
    assert first.stats["result_cache"] == "miss"
    return root, cache


# each edit: (file, old text, new text); applied one after the other to the same tree
EDITS = [
    # the body of a leaf that one region reaches: a new hazard in it
    ("helpers_pkg/jit_env.py", 'return torch.version.cuda or "0.0"', 'return os.environ.get("CUDA_V") or "0.0"'),
    # a new function nobody calls
    ("helpers_pkg/pure_math.py", "\n", "\n\ndef _never_called():\n    import subprocess\n    subprocess.run(['x'])\n"),
    # a call to a hazard added to a reached function
    ("c131_clean_cross_module_chain.py", "import torch", "import torch\nimport subprocess"),
    # a module-level constant that a guard reads
    ("c128_if_global_flag_false.py", "= False", "= True"),
    # a class's base changed (after adding the classes, then using one)
    ("c115_submodule_forward.py", "class Top(", "class Quiet(torch.nn.Module):\n    def forward(self, x):\n"
     "        return x\n\n\nclass Sub2(Quiet):\n    pass\n\n\nclass Top("),
    ("c115_submodule_forward.py", "self.sub = Sub()", "self.sub = Sub2()"),
    ("c115_submodule_forward.py", "class Sub2(Quiet):", "class Sub2(Sub):"),
    # an import renamed
    ("c005_subprocess_cross_module_from_import.py", "import get_cuda_version",
     "import get_cuda_version as gcv\nget_cuda_version = gcv"),
]


def test_each_kind_of_edit_gives_the_findings_of_a_scan_without_cache(corpus):
    root, cache = corpus
    for rel, old, new in EDITS:
        _edit(root / rel, old, new)
        got = _check(root, cache)
        assert got.stats["result_cache"] in ("incremental", "miss"), rel


def test_a_leaf_edit_walks_only_the_regions_that_reach_it(corpus):
    root, cache = corpus
    _edit(root / "helpers_pkg/jit_env.py", 'return torch.version.cuda or "0.0"',
          'return os.environ.get("CUDA_V") or "0.0"')
    got = _check(root, cache)
    inc = got.stats["incremental"]
    assert got.stats["result_cache"] == "incremental"
    assert 0 < inc["regions_walked"] < len(got.regions) / 4, inc
    assert inc["regions_reused"] + inc["regions_walked"] == len(got.regions)


def test_a_warm_process_whose_scan_failed_after_making_its_state_plans_again_from_the_file(corpus, monkeypatch):
    """An incremental scan makes its state of the previous one's tables (Incremental._state: that state is
    spent).  Where the scan fails after (here: adding the CL301 notes raises), a warm process does not plan
    the next edit from the spent state it kept: it reads the state's file again, and the next scan answers as
    a scan without cache."""
    from compile_lint import keptstates, postwalk

    root, cache = corpus
    monkeypatch.setattr(keptstates, "_KEPT_STATES", {})
    _edit(root / "helpers_pkg/jit_env.py", 'return torch.version.cuda or "0.0"',
          'return os.environ.get("CUDA_V") or "0.0"')
    real_notes = postwalk.add_cache_notes

    def failing(findings, program):
        raise RuntimeError("a failure after the state was made")

    monkeypatch.setattr(postwalk, "add_cache_notes", failing)
    with pytest.raises(RuntimeError):
        _scan(root, cache)
    (spent,) = [state for _, state in keptstates._KEPT_STATES.values()]
    assert spent.spent
    monkeypatch.setattr(postwalk, "add_cache_notes", real_notes)
    got = _scan(root, cache)
    assert got.stats["result_cache"] == "incremental" and _findings(got) == _findings(_scan(root, None))
    assert spent not in [state for _, state in keptstates._KEPT_STATES.values()]
    assert keptstates.write_kept_states() == []


def test_the_module_readers_a_warm_state_carries_on_equal_those_worked_out_from_every_unit(corpus, monkeypatch):
    """A warm process works out, after answering, how many units read each module (IncState.module_readers);
    each edit's state carries them on from its dead and new units.  After every edit they equal a count over
    every unit's reads, and each scan answers as a scan without cache."""
    from compile_lint import keptstates

    root, cache = corpus
    monkeypatch.setattr(keptstates, "_KEPT_STATES", {})
    monkeypatch.setattr(keptstates, "_WARM", True)
    carried_on = 0
    for i, (rel, old, new) in enumerate(EDITS + [(r, n, o) for r, o, n in reversed(EDITS)]):
        _edit(root / rel, old, new)
        got = _scan(root, cache)
        assert _findings(got) == _findings(_scan(root, None)), (i, rel)
        (state,) = [st for _, st in keptstates._KEPT_STATES.values() if not st.spent]
        carried = state.__dict__.get("_module_readers")  # (before the writing works them out)
        assert keptstates.write_kept_states() == []
        if got.stats["result_cache"] == "incremental" and i > 0:  # (the first planned from the file: none)
            assert carried is not None, (i, rel)
            carried_on += 1
        counts, module_of = state.__dict__.pop("_module_readers")
        fresh = state.module_readers()
        assert {m: n for m, n in counts.items() if n} == fresh[0] and module_of == fresh[1], (i, rel)
    assert carried_on >= len(EDITS) - 1


@pytest.fixture
def warm(monkeypatch):
    """This process as the daemon keeps it between answers (lint/daemon.py's serve): the states in memory, each
    merge of the regions' findings, the summaries the last answer read; ``answered()`` does what it does after
    each answer."""
    from compile_lint import cache as summary_cache
    from compile_lint import keptstates, postwalk, report, suppressions

    monkeypatch.setattr(keptstates, "_KEPT_STATES", {})
    monkeypatch.setattr(keptstates, "_WARM", True)
    monkeypatch.setattr(postwalk, "_KEEP_MERGES", True)
    monkeypatch.setattr(suppressions, "_KEPT_SOURCES", {})
    monkeypatch.setattr(report, "_KEPT_TEXTS", {})
    monkeypatch.setattr(summary_cache, "_LOADED", {})
    monkeypatch.setattr(summary_cache, "_LOADED_NOW", {})
    monkeypatch.setattr(summary_cache, "_WARMED", {})

    def answered():
        summary_cache.end_of_answer()
        assert keptstates.write_kept_states() == []
        (state,) = [st for _, st in keptstates._KEPT_STATES.values() if not st.spent]
        return state
    return answered


@pytest.mark.parametrize("fixture", ["multi_file", "nn_tree", "guards"])
def test_a_warm_process_answers_each_same_line_edit_as_a_scan_without_cache(tmp_path, fixture, warm):
    """Answered from what a warm process keeps (the previous merge, folded again only where a region's
    findings changed; the summaries its last answer read; which units read each item), each same-line edit and
    its undo give a scan without cache's findings, and the stale units found from the readers are those a
    search of every unit's reads finds."""
    from compile_lint import incstate

    root = tmp_path / fixture
    shutil.copytree(HERE / "fixtures" / fixture, root)
    cache = tmp_path / "cache"
    _scan(root, cache)
    state = warm()
    merged = replayed = 0
    for _ in _each_same_line_edit(root, 3):
        items = {it for it in list(state.items)[::7]}
        assert state.readers(build=False) is not None
        with_readers = incstate.stale_units(state, items)
        state.__dict__.pop("_readers")
        assert with_readers == incstate.stale_units(state, items)
        state.readers()
        got = _scan(root, cache)
        assert _findings(got) == _findings(_scan(root, None))
        inc = got.stats.get("incremental") or {}
        replayed += inc.get("regions_replayed", 0)
        merged += state.__dict__.get("_merge") is None  # (taken by the merge that folded against it)
        state = warm()
        assert state.__dict__.get("_merge") is not None
    assert replayed > 0 and merged > 0


def test_a_warm_process_keeps_each_regions_findings_as_its_merge_does(tmp_path, warm):
    """A process that answers once keeps each region's findings for its state pickled (Incremental._pack: it
    builds the state after the answer); a warm one's merge keeps those lists for the next edit's merge, and
    the state keeps the same lists, not copies (postwalk.MergeMemo folds by list object)."""
    root = tmp_path / "cases"
    shutil.copytree(CASES, root)
    _scan(root, tmp_path / "cache")
    state = warm()
    memo = state.__dict__.get("_merge")
    lists = [walk[3][0] for walk in state.walks]
    assert memo is not None and len(lists) > 3
    assert [id(found) for found in lists] == [id(found) for found in memo.lists]


def test_a_warm_process_that_answered_from_a_result_has_its_state_ready_for_the_next_edit(tmp_path, warm,
                                                                                          monkeypatch):
    """A daemon started after the state was written reads it after answering a scan of the unchanged tree (a
    result cache hit), with its readers, its merge and its walk logs' indexes, which scanned files spell a
    suppression comment, the summaries of the files on its findings' paths and of the modules its scan loaded,
    and (its report was JSON) the texts of its merged findings: the next edit's merge folds against that
    merge, its replays go from those indexes, its report reads no file for suppressions and encodes only the
    findings the edit changed, and the findings are a scan without cache's."""
    from compile_lint import cache as summary_cache
    from compile_lint import keptstates, report, suppressions

    root = tmp_path / "nn_tree"
    shutil.copytree(HERE / "fixtures" / "nn_tree", root)
    noted = sorted(root.rglob("*.py"))[0]
    noted.write_text(noted.read_text() + "\nimport os  # noqa: F401\n")
    model = root / "model.py"  # (a module the walk loads that no finding's path passes through)
    model.write_text("import helpers\n" + model.read_text().replace("return x * 2", "return helpers.double(x)", 1))
    (root / "helpers.py").write_text("def double(x):\n    return x * 2\n")
    cache = tmp_path / "cache"
    _scan(root, cache)
    warm()
    keptstates._KEPT_STATES.clear()  # (a daemon started since: nothing in memory)
    suppressions._KEPT_SOURCES.clear()
    hit = _scan(root, cache)
    assert hit.stats["result_cache"] == "hit" and _findings(hit)  # (its report, in JSON)
    state = warm()
    assert state.__dict__.get("_merge") is not None and state.readers(build=False) is not None
    kept = suppressions._KEPT_SOURCES
    assert set(kept) == {str(p) for p in root.rglob("*.py")} and kept[str(noted)][1] == noted.read_text()
    warmed = {id(f) for f in state.__dict__["_merge"].best.values()}
    assert warmed and warmed <= set(report._KEPT_TEXTS)
    on_paths = {p for f in hit.findings for p in (f.path, f.region.path, *(fr.path for fr in f.trace))}
    kept_summaries = {path for _, path in summary_cache._WARMED}  # (read, kept until another hit)
    loaded = {str(p) for p in root.rglob("*.py")
              if ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__") in state.loaded}
    assert on_paths and on_paths <= kept_summaries and loaded - on_paths and loaded <= kept_summaries
    logs = [log for *_, walk_logs in state.walks for log in walk_logs]
    assert logs and all(log.index is not None for log in logs)
    encoded = []
    plain = report.FindingEncoder._encode
    monkeypatch.setattr(report.FindingEncoder, "_encode", lambda enc, f: (encoded.append(id(f)), plain(enc, f))[1])
    edits = replayed = 0
    for _ in _each_same_line_edit(root, 2):
        got = _scan(root, cache)
        if not edits:  # the first edit after the hit: the findings it left as they were are not encoded again
            assert _findings(got) and any(id(f) in warmed and id(f) not in encoded for f in got.findings)
        assert _findings(got) == _findings(_scan(root, None))
        edits += got.stats["result_cache"] == "incremental" and state.__dict__.get("_merge") is None
        replayed += got.stats.get("incremental", {}).get("replays_indexed", 0)
        state = warm()
        assert all(log.index is not None for *_, walk_logs in state.walks for log in walk_logs)
    assert edits > 0 and replayed > 0


def test_a_warm_process_that_answered_from_a_result_lists_the_package_directories_its_scan_listed(tmp_path, warm,
                                                                                                     monkeypatch):
    """The search for a class's constructions lists its package's directory (ModuleLocator.package_files).  The
    state keeps the directories its scans listed (IncState.package_dirs); a daemon started after it was written
    lists them after answering a scan of the unchanged tree, so its first edit walks no directory, and the
    findings are a scan without cache's."""
    from compile_lint import discover, keptstates
    from compile_lint.program import locator

    monkeypatch.setattr(discover, "RACY_NS", 0)  # (a listing made right after the files were written is kept)
    root, cache, _ = _project(tmp_path, {  # (the first scan in a process of its own: nothing kept)
        "pkg/__init__.py": "",
        "pkg/layers.py": textwrap.dedent("""
            import os


            class Gate:
                def __init__(self, on):
                    self.on = on

                def run(self, x):
                    if self.on:
                        os.getenv("GATE")
                    return x
        """),
        "pkg/model.py": textwrap.dedent("""
            import torch
            from pkg.layers import Gate


            def make():
                return Gate(True)


            @torch.compile(fullgraph=True)
            def f(x, g: Gate):
                return g.run(x)
        """),
    })
    assert warm().package_dirs == (str(root / "pkg"),)
    keptstates._KEPT_STATES.clear()  # (a daemon started since: nothing in memory)
    monkeypatch.setattr(locator, "_PACKAGE_LISTINGS", {})
    monkeypatch.setattr(locator, "_PACKAGE_TABLES", {})
    hit = _scan(root, cache)
    assert hit.stats["result_cache"] == "hit" and [f.callee for f in hit.findings] == ["os.getenv"]
    warm()
    assert list(locator._PACKAGE_LISTINGS) == [str(root / "pkg")]

    def walk(*args, **kwargs):
        raise AssertionError("a directory walked while the user waits")

    real_walk = os.walk
    monkeypatch.setattr(locator.os, "walk", walk)
    _edit(root / "pkg/layers.py", 'os.getenv("GATE")', 'os.getenv("GATE2")')
    got = _scan(root, cache)
    assert got.stats["result_cache"] == "incremental" and [f.callee for f in got.findings] == ["os.getenv"]
    monkeypatch.setattr(locator.os, "walk", real_walk)  # (a scan without cache lists the directory)
    assert _findings(got) == _findings(_scan(root, None))


def test_a_warm_process_that_answered_the_hooks_result_has_each_list_folded_for_the_next_edit(tmp_path, warm,
                                                                                              monkeypatch):
    """The pre-commit hook's state (every path kept): a daemon started after it was written folds each walk's
    list, with the files of its hazards, after answering a scan of the unchanged tree (postwalk._LIST_FOLDS);
    the next edit's merge takes the folds of the lists it reuses and folds only the others, and its findings
    and paths are a scan without cache's."""
    from compile_lint import keptstates, postwalk

    monkeypatch.setattr(postwalk, "_LIST_FOLDS", {})
    root = tmp_path / "cases"
    shutil.copytree(CASES, root)
    cache = tmp_path / "cache"
    _scan(root, cache, keep_paths_by_hazard=True)
    warm()
    keptstates._KEPT_STATES.clear()  # (a daemon started since: nothing in memory)
    postwalk._LIST_FOLDS.clear()
    assert _scan(root, cache, keep_paths_by_hazard=True).stats["result_cache"] == "hit"
    state = warm()
    lists = [walk[3][0] for walk in state.walks]
    assert len(lists) > 10 and set(postwalk._LIST_FOLDS) == {id(found) for found in lists}
    assert all(fold.found is found and fold._files is not None
               for fold, found in zip((postwalk._LIST_FOLDS[id(found)] for found in lists), lists))
    folded: list = []
    fold_one = postwalk._ListFold.__init__

    def counting(self, found):
        folded.append(found)
        fold_one(self, found)

    monkeypatch.setattr(postwalk._ListFold, "__init__", counting)
    _edit(root / EDITS[0][0], *EDITS[0][1:])
    got = _scan(root, cache, keep_paths_by_hazard=True)
    assert got.stats["result_cache"] == "incremental"
    assert 0 < len(folded) < len(lists) / 10  # (the lists reused were folded after the hit)
    want = _scan(root, None, keep_paths_by_hazard=True)
    assert _findings(got) == _findings(want)
    assert {k: [(f.region.qualname, f.trace) for f in v] for k, v in got.paths_by_hazard.items()} == \
        {k: [(f.region.qualname, f.trace) for f in v] for k, v in want.paths_by_hazard.items()}
    assert got.files_by_hazard == {key: {f.region.path for f in found} | {fr.path for f in found for fr in f.trace}
                                   for key, found in want.paths_by_hazard.items()}


def test_an_edit_no_region_reads_walks_no_region(corpus):
    root, cache = corpus
    # a module of the tree that no compiled region imports
    (root / "helpers_pkg" / "unused_mod.py").write_text("def f():\n    return 1\n")
    assert _scan(root, cache).stats["result_cache"] == "miss"  # a new file: a full scan
    _edit(root / "helpers_pkg" / "unused_mod.py", "return 1", "import subprocess\n    return subprocess.run(['x'])")
    got = _check(root, cache)
    assert got.stats["result_cache"] == "incremental"
    assert got.stats["incremental"]["regions_walked"] == 0


def test_a_new_region_in_an_existing_file(corpus):
    root, cache = corpus
    _edit(root / "c130_clean_math.py", "import torch",
          "import torch\nimport subprocess\n\n\n@torch.compile(fullgraph=True)\ndef added(x):\n"
          "    subprocess.run(['ls'])\n    return x\n")
    _check(root, cache)


def test_deleted_and_added_files(corpus):
    root, cache = corpus
    (root / "c130_clean_math.py").unlink()
    _check(root, cache)
    (root / "c999_new.py").write_text("import subprocess\nimport torch\n\n\n@torch.compile(fullgraph=True)\n"
                                      "def g(x):\n    subprocess.run(['ls'])\n    return x\n")
    _check(root, cache)


@pytest.mark.parametrize("fixture", sorted(p.name for p in (HERE / "fixtures").iterdir() if p.is_dir()))
def test_fixtures_edit_every_function_body(tmp_path, fixture):
    """Every function of every file of a fixture gets a new environment read in its body, one at a time."""
    import ast

    root = tmp_path / fixture
    shutil.copytree(HERE / "fixtures" / fixture, root)
    cache = tmp_path / "cache"
    _scan(root, cache)
    kinds = []
    def functions(path: Path) -> list:
        tree = ast.parse(path.read_text())
        return sorted((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
                      key=lambda n: n.lineno)

    for path in sorted(root.rglob("*.py")):
        for i in range(min(6, len(functions(path)))):
            first = functions(path)[i].body[0]
            indent = " " * first.col_offset
            text = path.read_text().splitlines(keepends=True)
            text.insert(first.lineno - 1, f"{indent}__import__('os').environ.get('INC_EDIT')\n")
            path.write_text("".join(text))
            st = path.stat()
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
            kinds.append(_check(root, cache).stats["result_cache"])
    assert kinds and set(kinds) == {"incremental"}, kinds


def _same_line_edits(path: Path, prefix: str) -> list:
    """Each function of ``path`` with ``prefix`` put in front of the first one-line statement of its body, on
    the same line (no line moves, as the bench's code edits): [(function name, new text)]."""
    import ast

    src = path.read_text()
    out = []
    for fn in ast.walk(ast.parse(src)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for st in fn.body:
            if st.lineno != st.end_lineno or not isinstance(st, (ast.Expr, ast.Assign, ast.Return, ast.AugAssign)):
                continue
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
                continue  # the docstring
            lines = src.splitlines(keepends=True)
            line = lines[st.lineno - 1]
            if line[:st.col_offset].strip():
                continue
            lines[st.lineno - 1] = line[:st.col_offset] + prefix + line[st.col_offset:]
            out.append((fn.name, "".join(lines)))
            break
    return out


def _write(path: Path, text: str) -> None:
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def _each_same_line_edit(root: Path, limit: int):
    """The first ``limit`` same-line edits of each file under ``root`` (_same_line_edits: a hazard put in front
    of a one-line statement), each followed by its undo: written in turn, each yielded once written."""
    for path in sorted(root.rglob("*.py")):
        original = path.read_text()
        for _, text in _same_line_edits(path, "__import__('os').environ.get('INC_EDIT'); ")[:limit]:
            for step in (text, original):
                _write(path, step)
                yield path


@pytest.mark.parametrize("fixture", sorted(p.name for p in (HERE / "fixtures").iterdir() if p.is_dir()))
def test_same_line_edits_replay_the_walks_to_the_findings_of_a_scan_without_cache(tmp_path, fixture):
    """A hazard added to a function's body with no line moved, then removed (the undo): the regions that reach
    it are replayed from their walk logs (lint/reach_replay.py), and the findings are a scan without cache's."""
    root = tmp_path / fixture
    shutil.copytree(HERE / "fixtures" / fixture, root)
    cache = tmp_path / "cache"
    _scan(root, cache)
    replayed = 0
    for _ in _each_same_line_edit(root, 6):
        replayed += _check(root, cache).stats["incremental"]["regions_replayed"]
    assert replayed > 0


def _paths(result) -> list:
    """Each finding with its whole path (a frame's equality leaves out where its call ends: compared here)."""
    return [(f.rule, f.path, f.line, f.fix_point, tuple((fr.path, fr.line, fr.qualname, fr.end) for fr in f.trace),
             f.conditions) for f in result.findings]


@pytest.mark.parametrize("fixture", sorted(p.name for p in (HERE / "fixtures").iterdir() if p.is_dir()))
def test_the_replay_from_the_log_index_gives_what_taking_every_event_gives(tmp_path, fixture, monkeypatch):
    """The same-line edits and their undos, each scanned twice from the same state: replayed from the log's
    index (reach_replay_indexed), and taking every event of the log in order (reach_replay._KeepingReplay).
    The findings, in order and with their whole paths, are the same; so are the next edit's (the states
    the two leave are replayed in turn)."""
    from compile_lint import reach_replay

    root = tmp_path / fixture
    shutil.copytree(HERE / "fixtures" / fixture, root)
    cache, other = tmp_path / "cache", tmp_path / "other"
    _scan(root, cache)
    shutil.copytree(cache, other)
    indexed = 0
    for _ in _each_same_line_edit(root, 6):
        monkeypatch.setattr(reach_replay, "INDEXED", False)
        every = _scan(root, other)
        monkeypatch.setattr(reach_replay, "INDEXED", True)
        got = _scan(root, cache)
        assert _paths(got) == _paths(every)
        a, b = got.stats["incremental"], every.stats["incremental"]
        assert b["replays_indexed"] == 0 and a["regions_replayed"] == b["regions_replayed"]
        assert a["visits_kept"] == b["visits_kept"]
        indexed += a["replays_indexed"]
    assert indexed > 0


def test_a_call_added_on_the_same_line_is_walked_not_replayed(tmp_path):
    """A new call changes what the walk reaches: the region is walked again, and the hazard behind the call is
    found; a hazard added to the same function is replayed; each as a scan without cache finds."""
    root, cache, _ = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "import torch\nfrom pkg.h import work\n\n\n@torch.compile(fullgraph=True)\ndef f(x):\n"
                    "    return work(x)\n",
        "pkg/h.py": "import os\nimport subprocess\n\n\ndef probe():\n    return subprocess.run(['nvcc'])\n\n\n"
                    "def ident(x):\n    return x\n\n\ndef work(x):\n    y = x + 1\n    return ident(y)\n",
    })
    h = root / "pkg/h.py"
    original = h.read_text()
    _write(h, original.replace("    y = x + 1", "    probe(); y = x + 1"))
    got = _check(root, cache)
    assert got.stats["incremental"]["regions_walked"] == 1 and got.stats["incremental"]["regions_replayed"] == 0
    assert [f["callee"] for f in _findings(got)] == ["subprocess.run"]
    _write(h, original)
    assert _check(root, cache).stats["incremental"]["regions_replayed"] == 0  # the call removed
    _write(h, original.replace("    y = x + 1", "    os.environ.get('K'); y = x + 1"))
    got = _check(root, cache)
    assert got.stats["incremental"]["regions_replayed"] == 1
    assert [f["callee"] for f in _findings(got)] == ["os.environ.get"]
    # in front of a call, on its line: the call moves (its column), the traversal does not
    _write(h, original.replace("    return ident(y)", "    os.environ.get('K2'); return ident(y)"))
    got = _check(root, cache)
    assert got.stats["incremental"]["regions_replayed"] == 1
    assert [f["callee"] for f in _findings(got)] == ["os.environ.get"] and "K2" in _findings(got)[0]["message"]


def test_a_call_of_several_callees_moved_along_its_line_is_replayed(tmp_path):
    """One of several callees (a table of functions indexed by an argument) is a condition named by the call's
    position; a hazard put in front of the call on its line moves the call, not what it reaches: replayed, with
    the findings of a scan without cache."""
    root, cache, first = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "import torch\nfrom pkg.h import work\n\n\n@torch.compile(fullgraph=True)\ndef f(x, k):\n"
                    "    return work(x, k)\n",
        "pkg/h.py": "import os\nimport subprocess\n\n\ndef fa(x):\n    return subprocess.run(['a'])\n\n\n"
                    "def fb(x):\n    return subprocess.run(['b'])\n\n\n"
                    "def work(x, k):\n    return {'a': fa, 'b': fb}[k](x)\n",
    })
    assert len(_findings(first)) == 2 and all(f["conditions"] for f in _findings(first))
    h = root / "pkg/h.py"
    _write(h, h.read_text().replace("    return {'a'", "    os.environ.get('K'); return {'a'"))
    got = _check(root, cache)
    assert got.stats["incremental"]["regions_replayed"] == 1
    assert len(_findings(got)) == 3


def test_a_replay_reports_again_only_the_hazard_sites_the_edit_touched(tmp_path):
    """A hazard added in front of a call, on its line: the region is replayed, and only the hazards whose
    reports the edit touched -- the new one, and the one below the moved call (its path's frame moved) -- are
    reported again; the others are the previous walk's findings (reach_replay._KeepingReplay).  Each result,
    paths and all (the frames' ends included), is a scan without cache's; the undo drops the added hazard."""
    root, cache, first = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "import torch\nfrom pkg.h import work, other\n\n\n@torch.compile(fullgraph=True)\ndef f(x):\n"
                    "    return work(x) + other(x)\n",
        "pkg/h.py": "import os\nimport subprocess\n\n\ndef probe(x):\n    subprocess.run(['nvcc'])\n    return x\n\n\n"
                    "def leaf(x):\n    os.environ.get('L')\n    return x\n\n\n"
                    "def other(x):\n    os.environ.get('O')\n    return probe(x)\n\n\n"
                    "def work(x):\n    y = leaf(x)\n    return y\n",
    })

    def paths(result) -> list:  # (a frame's equality leaves out where its call ends: compared here)
        return sorted((f.rule, f.line, tuple((fr.path, fr.line, fr.qualname, fr.end) for fr in f.trace), f.conditions)
                      for f in result.findings)

    h = root / "pkg/h.py"
    original = h.read_text()
    for text, n in ((original.replace("    y = leaf(x)", "    os.environ.get('K'); y = leaf(x)"), 4), (original, 3)):
        _write(h, text)
        got = _check(root, cache)
        inc = got.stats["incremental"]
        assert inc["regions_replayed"] == 1 and inc["visits_kept"] == 3  # f's, other's and probe's
        assert len(got.findings) == n
        assert paths(got) == paths(_scan(root, None))


_RELINKED_REGION = ("import torch\nfrom pkg.h import a, g\n\n\n@torch.compile(fullgraph=True)\ndef f(x, flag):\n"
                    "    g(x)\n    if flag:\n        y = a(x)\n    else:\n        y = a(x)\n    return y\n")


def _frames_of(result) -> list:
    return sorted((f.rule, f.line, f.fix_point, tuple((fr.path, fr.line, fr.qualname) for fr in f.trace),
                   f.conditions) for f in result.findings)


def test_a_replay_builds_the_path_above_a_node_reached_again_certainly_from_its_first_link(tmp_path):
    """``a`` is reached under ``if flag`` (line 9), then certainly under ``else`` (line 11): walking again
    builds the path above it at q's first report below it, from line 9.  The edit in g touches q's hazard
    site, so q's report below ``a`` (kept visit, another node: entered through the cached loader) is made
    again after the replay -- from line 9 still (reach_replay._KeepingReplay.relinked), as a scan without
    cache says."""
    root, cache, first = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": _RELINKED_REGION,
        "pkg/h.py": "import functools\nimport os\nimport subprocess\n\n\ndef q(x):\n    subprocess.run(['q'])\n"
                    "    return x\n\n\ndef g(x):\n    y = 1\n    return q(x)\n\n\n@functools.cache\ndef a(x):\n"
                    "    return q(x)\n",
    })
    below_a = [f for f in first.findings if f.rule == "CL101" and f.fix_point == "a"]
    assert [[(fr.line, fr.qualname) for fr in f.trace] for f in below_a] == [[(9, "f"), (18, "a"), (7, "q")]]
    h = root / "pkg/h.py"
    original = h.read_text()
    for text in (original.replace("    y = 1", "    os.environ.get('K'); y = 1"), original):
        _write(h, text)
        got = _check(root, cache)
        inc = got.stats["incremental"]
        assert inc["replays_keeping"] == 1 and inc["replays_relinked"] == 0 and inc["replays_indexed"] == 1
        assert _frames_of(got) == _frames_of(_scan(root, None))


def test_a_new_report_on_a_path_the_last_walk_built_later_reports_every_hazard_again(tmp_path):
    """A hazard added in ``a``, which is reached under ``if flag`` and then certainly: its first report
    builds the path above it from the first link, where the previous walk, reporting nothing below ``a``,
    built it later or never -- the findings kept below it could differ, so the replay reports every hazard
    again (stats ``replays_relinked``); the result is a scan without cache's."""
    root, cache, _ = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": _RELINKED_REGION,
        "pkg/h.py": "import os\nimport subprocess\n\n\ndef g(x):\n    subprocess.run(['g'])\n    return x\n\n\n"
                    "def a(x):\n    y = x + 1\n    return y\n",
    })
    h = root / "pkg/h.py"
    _write(h, h.read_text().replace("    y = x + 1", "    os.environ.get('K'); y = x + 1"))
    got = _check(root, cache)
    inc = got.stats["incremental"]
    assert inc["regions_replayed"] == 1 and inc["replays_relinked"] == 1 and inc["replays_keeping"] == 0
    assert _frames_of(got) == _frames_of(_scan(root, None))


def test_replays_leave_a_state_that_does_not_grow(tmp_path):
    """An edit and its undo, again and again, each replayed: the state keeps what the last replay used, not
    what every replay before it did (its reports, its steps)."""
    from compile_lint import keptstates

    root, cache, _ = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "import torch\nfrom pkg.h import work\n\n\n@torch.compile(fullgraph=True)\ndef f(x):\n"
                    "    return work(x)\n",
        "pkg/h.py": "import os\nimport subprocess\n\n\ndef probe(x):\n    subprocess.run(['nvcc'])\n"
                    "    return x\n\n\ndef work(x):\n    y = probe(x)\n    return y\n",
    })
    h = root / "pkg/h.py"
    original = h.read_text()
    sizes = []
    for _ in range(3):
        for text in (original.replace("    y = probe(x)", "    os.environ.get('K'); y = probe(x)"), original):
            _write(h, text)
            assert _check(root, cache).stats["incremental"]["regions_replayed"] == 1
        (state,) = (cache / "results").glob("*.inc")
        st = keptstates.read_state(state)
        sizes.append((len(st.reads), sum(map(len, st.uses.values())), len(st.redone_units)))
    assert sizes[0] == sizes[1] == sizes[2], sizes


def test_the_pre_commit_hook_keeps_every_path_after_an_edit(corpus):
    """The hook's scan keeps every path to each hazard: after an edit, the same paths as without cache."""
    root, cache = corpus

    def paths(result) -> dict:  # (each hazard's paths in the order the hook reads them: postscan.touching)
        return {k: [(f.region.qualname, tuple((fr.path, fr.line, fr.end) for fr in f.trace), f.conditions)
                    for f in v] for k, v in result.paths_by_hazard.items()}

    first = _scan(root, cache, keep_paths_by_hazard=True)
    assert first.stats["result_cache"] == "miss" and first.paths_by_hazard
    hit = _scan(root, cache, keep_paths_by_hazard=True)
    assert hit.stats["result_cache"] == "hit" and paths(hit) == paths(first)
    _edit(root / "helpers_pkg/jit_env.py", 'return torch.version.cuda or "0.0"',
          'return os.environ.get("CUDA_V") or "0.0"')
    got = _scan(root, cache, keep_paths_by_hazard=True)
    want = _scan(root, None, keep_paths_by_hazard=True)
    assert got.stats["result_cache"] == "incremental"
    assert _findings(got) == _findings(want) and paths(got) == paths(want)


@pytest.mark.parametrize("fixture", ["multi_file", "nn_tree"])
def test_the_pre_commit_hooks_replays_keep_each_hazards_paths_in_walk_order(tmp_path, fixture):
    """The hook keeps every path to each hazard and reads them in order (the first that touches the staged
    files is shown): a replay keeps the paths of the hazard sites the edit did not touch and makes the others'
    again (reach_replay._KeepingReplay), each site's in walk order -- every hazard's paths, in order and
    whole, are a scan without cache's."""
    root = tmp_path / fixture
    shutil.copytree(HERE / "fixtures" / fixture, root)
    cache = tmp_path / "cache"

    def paths(result) -> dict:
        return {k: [(f.region.qualname, tuple((fr.path, fr.line, fr.qualname, fr.end) for fr in f.trace),
                     f.conditions) for f in v] for k, v in result.paths_by_hazard.items()}

    _scan(root, cache, keep_paths_by_hazard=True)
    keeping = 0
    for _ in _each_same_line_edit(root, 4):
        got = _scan(root, cache, keep_paths_by_hazard=True)
        assert paths(got) == paths(_scan(root, None, keep_paths_by_hazard=True))
        keeping += got.stats["incremental"]["replays_keeping"]
    assert keeping > 0


def test_the_reused_regions_modules_still_count_after_the_walk(tmp_path):
    """A region that is reused loads nothing in the incremental scan: its modules' suppressions, the
    environment keys they set, and the cached loaders on its paths must still count (modulestub.ModuleStub)."""
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "import torch\nfrom pkg.h1 import work\n\n\n@torch.compile(fullgraph=True)\ndef f1(x):\n"
                    "    return work(x)\n",
        "pkg/h1.py": "import functools\nimport os\nimport subprocess\nfrom pkg.h3 import flag\n\n\n@functools.cache\n"
                     "def load():\n    return subprocess.run(['nvcc'])\n\n\ndef work(x):\n    load()\n"
                     "    os.environ.get('SET_BY_H3')\n    flag()\n"
                     "    os.environ.get('IGNORED')  # compile-lint: ignore[CL201]\n    return x\n",
        "pkg/h3.py": "import os\n\nos.environ['SET_BY_H3'] = '1'\n\n\ndef flag():\n    return 1\n",
        "pkg/b.py": "import torch\nfrom pkg.h2 import other\n\n\n@torch.compile(fullgraph=True)\ndef f2(x):\n"
                    "    return other(x)\n",
        "pkg/h2.py": "def other(x):\n    return x\n",
    }
    root, cache, first = _project(tmp_path, files)
    rules = sorted(f.rule for f in first.findings)
    assert "CL301" in rules and first.suppressed and not any("SET_BY_H3" in f.message for f in first.findings)
    _edit(root / "pkg/h2.py", "return x", "import os; return os.environ.get('NEW')")
    got = _check(root, cache)
    assert got.stats["incremental"]["regions_walked"] == 1 and got.stats["incremental"]["regions_reused"] == 1
    assert len(got.suppressed) == len(first.suppressed)


_STATEMENTS = [
    "__import__('os').environ.get('INC_RANDOM')",  # a new hazard (CL201)
    "__import__('subprocess').run(['ls'])",  # a new hazard (CL101)
    "pass",  # a line more: everything below moves
]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_edits_of_the_corpus(tmp_path, seed):
    """Seeded random sequences of edits (a statement put into a random function, or a function removed from
    its file's end): after each, the incremental findings equal a scan without cache."""
    import ast
    import random

    rnd = random.Random(seed)
    root = tmp_path / "cases"
    shutil.copytree(CASES, root)
    cache = tmp_path / "cache"
    _scan(root, cache)
    files = sorted(root.rglob("*.py"))
    for _ in range(4):
        path = rnd.choice(files)
        src = path.read_text()
        fns = sorted((n for n in ast.walk(ast.parse(src)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
                     key=lambda n: n.lineno)
        if not fns:
            continue
        fn = rnd.choice(fns)
        lines = src.splitlines(keepends=True)
        if rnd.random() < 0.2 and fn.end_lineno == len(lines) and fn.col_offset == 0:
            del lines[fn.lineno - 1 - len(fn.decorator_list):]  # the file's last function, removed
        else:
            first = fn.body[0]
            lines.insert(first.lineno - 1, " " * first.col_offset + rnd.choice(_STATEMENTS) + "\n")
        path.write_text("".join(lines))
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        _check(root, cache)


def test_a_comment_that_changes_a_text_search_is_not_a_hit(corpus):
    """The summary of a file is unchanged by a comment, but the text searches the scan made (is it a region
    candidate, which files mention an identifier) read comments too: a comment that changes one is a scan."""
    root, cache = corpus
    helper = root / "helpers_pkg" / "pure_math.py"
    assert b"compile" not in helper.read_bytes()
    helper.write_text(helper.read_text() + "\n# see torch.compile\n")
    got = _check(root, cache)
    assert got.stats["result_cache"] != "hit"
    helper.write_text(helper.read_text() + "\n# a comment that changes nothing\n")
    st = helper.stat()
    os.utime(helper, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert _scan(root, cache).stats["result_cache"] == "hit"


def test_a_comment_that_changes_no_text_search_is_a_hit_from_the_states_header(corpus, monkeypatch):
    """Whether a comment changed a text search is asked of the state's header (IncState.header: its checks and
    candidates, pickled on their own at the head of its file), not of the state, which is not read (on the
    bench site reading it was 3.6 s of the comment edit's 5 s); a comment that changes one, or a code edit,
    reads the state."""
    from compile_lint import keptstates

    root, cache = corpus
    reads = []
    read_state = keptstates.read_state
    monkeypatch.setattr(keptstates, "read_state", lambda path: reads.append(path) or read_state(path))
    helper = root / "helpers_pkg" / "pure_math.py"
    _write(helper, helper.read_text() + "\n# a comment that changes nothing\n")  # (at the end: no line moves)
    got = _scan(root, cache)
    assert got.stats["result_cache"] == "hit" and reads == []
    assert _findings(got) == _findings(_scan(root, None))
    _edit(helper, "# a comment that changes nothing", "# see torch.compile")
    assert _scan(root, cache).stats["result_cache"] != "hit" and len(reads) == 1


# the tables of Program / Reach / RegionFinder that need no tracking: pure functions of their key (interning,
# syntax-only caches), per-scan inputs, counters for the stats, recursion guards (order effects: see README),
# the provisional entries of the cycles under way (empty between two units: program/fixpoint.py), what a
# replay keeping findings asks of a kept report (its steps' kinds, its file, its merge key's parts: what the
# reports say is unchanged where it keeps them, Incremental._reports_unchanged)
_UNTRACKED = {
    "Program": {"modules", "_function_of", "_class_of", "_value_sets", "_name_sets", "_reads_memo",
                "_value_reads_memo", "_active", "env_set", "env_removed", "argument_values", "scanned_modules",
                "foreign_origins", "_provisional", "_seeds", "_external_attrs",
                "_external_instance_attrs"},  # (the last two: of names only)
    "Reach": {"import_roots", "_frames_interned", "_variants", "_replay_kinds", "_replay_files", "_nodes_interned",
              "_reporter_keys", "_replay_near", "_replay_sites"},
    "RegionFinder": {"unresolved", "models", "candidates"},
}


def test_every_table_of_the_walk_is_tracked(tmp_path):
    """A memo table that lint/incremental.py does not know of would let a region reuse what another region
    worked out without depending on what it read: every dict or set attribute of the three objects is either
    tracked or listed here as not needing it (a new table fails this test until it is one or the other)."""
    from compile_lint.engine import ScanOptions  # noqa: F401 - the package, for the classes below
    from compile_lint.contexts import ContextCaps
    from compile_lint.incremental import Incremental, TrackedMemo, TrackedMap  # noqa: F401
    from compile_lint.tracking import TrackedContextCaps
    from compile_lint.program import ModuleLocator, Program
    from compile_lint.reach import Reach
    from compile_lint.regions import RegionFinder

    program = Program(ModuleLocator({}, []), lambda *a: None)
    reach = Reach(program)
    finder = RegionFinder(program)
    Incremental().install(program, reach, finder)
    for obj in (program, reach, finder):
        name = type(obj).__name__
        for attr, value in vars(obj).items():
            # a context cap answers by the order of the scan: tracked so that an incremental scan knows it
            assert not isinstance(value, ContextCaps) or isinstance(value, TrackedContextCaps), f"{name}.{attr}"
            if isinstance(value, (dict, set)) and not isinstance(value, TrackedMemo):
                if type(value).__name__ in ("_MentionIndexes", "_Rebound"):
                    continue
                assert attr in _UNTRACKED[name], f"{name}.{attr} is neither tracked nor known to need no tracking"


def test_a_region_walked_again_sees_the_context_caps_of_a_full_scan(tmp_path):
    """A function entered with more constant contexts than the walk keeps (reach.MAX_CONST_CONTEXTS) is walked
    without them past the cap, so a region's findings depend on how many contexts the regions before it
    brought: a region walked again must see the caps of a full scan (lint/tracking.py TrackedContextCaps)."""
    from compile_lint.reach import MAX_CONST_CONTEXTS

    n = MAX_CONST_CONTEXTS + 1
    body = ["import subprocess", "import torch", "", "", "def f(k):", "    if k == 999:",
            "        subprocess.run(['x'])", "    return k", ""]
    for i in range(n):
        body += ["", "@torch.compile(fullgraph=True)", f"def g{i}(x):", f"    return f({i}) + x", ""]
    body += ["", "@torch.compile(fullgraph=True)", "def last(x):", "    return f(999) + x", ""]
    root, cache, _ = _project(tmp_path, {"pkg/__init__.py": "", "pkg/regions.py": "\n".join(body)})
    _edit(root / "pkg" / "regions.py", "return f(999) + x", "return f(999) + x + 1")
    got = _check(root, cache)
    assert got.stats["result_cache"] == "incremental"


def _capped_regions(n: int, between: str = "", hazard: int = 15) -> str:
    """Regions g0..g{n-1} calling ``f(i)`` (f holds a hazard behind ``k == hazard``: decided only while that
    context is among f's first MAX_CONST_CONTEXTS), ``between`` put after g3."""
    body = ["import subprocess", "import torch", "", "", "def f(k):", f"    if k == {hazard}:",
            "        subprocess.run(['x'])", "    return k", ""]
    for i in range(n):
        body += ["", "@torch.compile(fullgraph=True)", f"def g{i}(x):", f"    return f({i}) + x", ""]
        if i == 3:
            body.append(between)
    return "\n".join(body)


def test_a_region_that_met_a_context_first_makes_the_function_count_again(tmp_path):
    """An edit of a region that brought one of f's first contexts (g0: f(0)) changes which contexts are first
    (f(100) instead): g0 walked again meets f(100), before the top unit that reached the cap (ContextsMoved);
    planned again from f's first contexts in that try's order, only the units that met a context whose
    precision they change run again (g0: f(0) and f(100)); every other region answered f(1)..f(15) precise
    and f(16) widened, as a full scan does -- the same findings.  (Before session 31 every region that met
    f ran again.)"""
    from compile_lint.reach import MAX_CONST_CONTEXTS

    n = MAX_CONST_CONTEXTS + 1
    root, cache, _ = _project(tmp_path, {"pkg/__init__.py": "", "pkg/regions.py": _capped_regions(n)})
    _edit(root / "pkg" / "regions.py", "return f(0) + x", "return f(100) + x")
    got = _check(root, cache)
    inc = got.stats["incremental"]
    assert inc["contexts_reseeded"] == 1 and inc["replans"] == 1
    assert inc["regions_walked"] == 1  # g0


def test_a_region_that_no_longer_meets_a_first_context_makes_the_function_count_again(tmp_path):
    """g0 stops calling f: in a full scan f(16) becomes one of f's first contexts (its hazard certain).  The
    walk of g0 again meets nothing the caps could stop at; the contexts table of the scan, checked after the
    walks (Incremental.settle), has other first contexts than those answered: planned again, a full scan's
    findings."""
    from compile_lint.reach import MAX_CONST_CONTEXTS

    n = MAX_CONST_CONTEXTS + 1
    root, cache, first = _project(tmp_path, {"pkg/__init__.py": "", "pkg/regions.py": _capped_regions(n, hazard=n - 1)})
    _edit(root / "pkg" / "regions.py", "return f(0) + x", "return x")
    got = _check(root, cache)
    assert got.stats["incremental"]["replans"] == 1
    assert _findings(got) != _findings(first)


def test_a_region_that_no_longer_meets_a_context_of_a_function_below_its_cap_moves_nothing(tmp_path):
    """g0 stops calling f, which never reached its cap: every context of f is precise in a full scan of either
    tree, so the first contexts' change (f(0) no longer among them) is answered without planning again."""
    root, cache, first = _project(tmp_path, {"pkg/__init__.py": "", "pkg/regions.py": _capped_regions(3, hazard=0)})
    _edit(root / "pkg" / "regions.py", "return f(0) + x", "return x")
    got = _check(root, cache)
    assert got.stats["result_cache"] == "incremental"
    assert got.stats["incremental"]["replans"] == 0 and got.stats["incremental"]["regions_walked"] == 1
    assert _findings(got) != _findings(first)  # (f(0)'s hazard is gone)


def test_a_scan_whose_plan_moved_too_often_scans_in_full(tmp_path, monkeypatch):
    """Each try of a moved plan costs an incremental scan: past MAX_REPLANS the scan is a full one (tracked,
    its state the next edit's), with a full scan's findings."""
    from compile_lint import engine
    from compile_lint.reach import MAX_CONST_CONTEXTS

    monkeypatch.setattr(engine, "MAX_REPLANS", 1)
    n = MAX_CONST_CONTEXTS + 1
    root, cache, _ = _project(tmp_path, {"pkg/__init__.py": "", "pkg/regions.py": _capped_regions(n, hazard=n - 1)})
    _edit(root / "pkg" / "regions.py", "return f(0) + x", "return x")
    got = _check(root, cache)
    assert got.stats["result_cache"] == "miss"
    assert got.stats["result_cache_miss"].startswith("each plan of the edit moved which contexts of some functions")
    _edit(root / "pkg" / "regions.py", "return f(1) + x", "return f(1) + x + 1")
    assert _check(root, cache).stats["result_cache"] == "incremental"


# f and g return each other (tests/test_resolver_cycles.py); r0 enters the cycle at f, r1 at g
_CYCLE_REGIONS = "import subprocess\nimport torch\n" + textwrap.dedent(MUTUAL) + """

def h(k):
    if k == 2:
        subprocess.run(["x"])
    return k


def h0(k):
    return k


@torch.compile(fullgraph=True)
def r0(x):
    return h0(f(x)) + x


@torch.compile(fullgraph=True)
def r1(x):
    return h(g(x)) + x
"""


def test_a_unit_walked_again_meets_the_values_a_cycle_has_in_a_full_scan(tmp_path):
    """f and g return each other.  Cut where it was entered, the cycle gave g the value 2 when a full scan
    entered it at f (r0), so that r1's h(2) met the hazard on every call (an error), and 1 or 2 when r1, edited
    and walked again in a fresh program without r0's work, entered it at g (a warning): the incremental scan's
    findings differed from a full scan's (session 27's known gap).  Solved to its fixpoint
    (lint/program/fixpoint.py), g may return 1 or 2 whichever region enters the cycle first: a warning in both."""
    root, cache, first = _project(tmp_path, {"pkg/__init__.py": "", "pkg/regions.py": _CYCLE_REGIONS})
    assert [f["severity"] for f in _findings(first) if f["qualname"] == "h"] == ["warning"]
    _edit(root / "pkg" / "regions.py", "return h(g(x)) + x", "return h(g(x)) + x + 1")
    _check(root, cache)


def test_a_unit_walked_again_that_tests_a_value_of_a_cycle_meets_the_full_scans_value(tmp_path):
    """As above, but r1 tests g's value in a guard (``if g(x) == 2``) instead of passing it: the full scan
    decided the guard (an error) and r1 walked again could not (a warning), and nothing it met was a context
    cap's, so nothing planned the scan again.  Now neither decides it."""
    src = _CYCLE_REGIONS.replace("def r1(x):\n    return h(g(x)) + x",
                                 "def r1(x):\n    if g(x) == 2:\n        subprocess.run([\"y\"])\n    return x")
    root, cache, first = _project(tmp_path, {"pkg/__init__.py": "", "pkg/regions.py": src})
    assert [f["severity"] for f in _findings(first) if f["qualname"] == "r1"] == ["warning"]
    _edit(root / "pkg" / "regions.py", "    return x\n", "    return x + 1\n")
    _check(root, cache)


def test_a_moved_plan_that_would_walk_again_most_of_the_scan_is_a_full_scan(tmp_path, monkeypatch):
    """Planned again after ContextsMoved: past REPLAN_MAX_STALE_TOPS of the top units stale (and
    REPLAN_MIN_STALE_TOPS; both lowered here for a small project, whose plan made again runs g0's file search
    and walk) there is no second try (on a large project it may cost about a full scan, and move again): a
    full scan, tracked, that says why, with a full scan's findings."""
    from compile_lint import engine
    from compile_lint.reach import MAX_CONST_CONTEXTS

    monkeypatch.setattr(engine, "REPLAN_MIN_STALE_TOPS", 0)
    monkeypatch.setattr(engine, "REPLAN_MAX_STALE_TOPS", 0.05)
    n = MAX_CONST_CONTEXTS + 1
    root, cache, _ = _project(tmp_path, {"pkg/__init__.py": "", "pkg/regions.py": _capped_regions(n)})
    _edit(root / "pkg" / "regions.py", "return f(0) + x", "return f(100) + x")
    got = _check(root, cache)
    assert got.stats["result_cache"] == "miss"
    why = got.stats["result_cache_miss"]
    assert why.startswith("the edit moved which contexts of 1 functions come first") and f"2 of {n + 1} " in why
    _edit(root / "pkg" / "regions.py", "return f(1) + x", "return f(1) + x + 1")
    assert _check(root, cache).stats["result_cache"] == "incremental"  # the full scan left its state


def test_a_context_met_before_the_cap_by_a_region_that_did_not_meet_it_plans_again(tmp_path):
    """A region between g3 and g4 that did not call f starts calling it with a new context: in a full scan that
    context is one of f's first, and g15's f(15) is widened (its hazard no longer certain).  The plan could not
    know (the region met no context of f before), so the scan meets ContextsMoved, plans again from f's first
    contexts in that try's order (g15, whose f(15) they widen, runs again), and gives a full scan's findings."""
    from compile_lint.reach import MAX_CONST_CONTEXTS

    n = MAX_CONST_CONTEXTS
    between = "\n@torch.compile(fullgraph=True)\ndef h(x):\n    return x + 1\n"
    root, cache, first = _project(tmp_path, {"pkg/__init__.py": "", "pkg/regions.py": _capped_regions(n, between)})
    _edit(root / "pkg" / "regions.py", "    return x + 1\n", "    return f(100) + x\n")
    got = _check(root, cache)
    assert got.stats["incremental"]["replans"] == 1
    assert got.stats["incremental"]["regions_walked"] == 2  # h, and g15
    assert _findings(got) != _findings(first)  # the edit moved f's cap: g15's hazard is no longer certain


def test_a_top_unit_run_again_that_met_the_same_new_contexts_keeps_their_previous_order():
    """Which contexts of a function are first goes by the order they are met in; a top unit run again in a
    fresh program meets them in another order (it works out what earlier units had worked out).  Where it met
    the same contexts new to the function there (an extra one that an earlier unit met counts for nothing),
    the contexts table takes the previous scan's order -- the first contexts are then the previous scan's,
    nothing moved; where a context is new, or no longer met, the order is this scan's."""
    from compile_lint.incstate import first_contexts, in_previous_order

    key, cap = ("call", 7), 4
    earlier, rerun = 10, 20  # top units in scan order: one reused whole, one run again
    before = {(key, rerun): [(3, 5), (4, 5), (1, 6), (5, 6), (6, 6)]}  # the previous scan's, in its order

    def table(rerun_met: list) -> tuple:
        by_top = {earlier: [(1, 2), (2, 2)], rerun: list(rerun_met)}
        in_previous_order(key, by_top, [earlier, rerun], before)
        return by_top[rerun], first_contexts([(t, by_top[t]) for t in (earlier, rerun)], cap)

    previous = first_contexts([(earlier, [(1, 2), (2, 2)]), (rerun, before[(key, rerun)])], cap)
    assert previous == ({1, 2, 3, 4}, rerun)
    # the same contexts in another order, and 2 (met by the earlier unit, not here before) met here too: the
    # previous order, 2 after
    got, first = table([(6, 8), (5, 8), (2, 8), (1, 8), (4, 9), (3, 9)])
    assert [d for d, _ in got] == [3, 4, 1, 5, 6, 2] and first == previous
    assert [u for d, u in got if d == 6] == [8]  # (each context keeps the unit that met it in this scan)
    # without it, 6 and 5 would be first: the cap moved
    assert first_contexts([(earlier, [(1, 2), (2, 2)]), (rerun, [(6, 8), (5, 8), (4, 9), (3, 9)])], cap)[0] != \
        previous[0]
    # a context the previous scan did not meet there, or one no longer met: this scan's order
    assert [d for d, _ in table([(7, 8), (4, 9), (3, 9), (5, 8), (6, 8)])[0]] == [7, 4, 3, 5, 6]
    assert [d for d, _ in table([(6, 8), (4, 9), (3, 9)])[0]] == [6, 4, 3]
    # met as before (a replayed walk's): as it is -- but a context met twice goes with its first meeting
    for met, order in (([(3, 5), (4, 5), (1, 6)], [3, 4, 1]), ([(3, 5), (4, 5), (3, 6)], [3, 3, 4])):
        by_top = {rerun: list(met)}
        in_previous_order(key, by_top, [rerun], {(key, rerun): list(met)})
        assert [d for d, _ in by_top[rerun]] == order


def test_a_body_edit_that_leaves_what_the_regions_read_walks_no_region(tmp_path):
    """Early cut-off by parts of a function (tracking.FUNCTION_PARTS): every region reads the value a helper
    returns (a module-level constant computed by calling it), none walks into it.  An edit of its body that
    adds a hazard and a local, and leaves its signature and what it returns, changes only the items of the
    body ("fc") and of the new local: no region is walked again, and the findings are a full scan's."""
    files = {
        "pkg/__init__.py": "",
        "pkg/h.py": "import os\n\n\ndef size():\n    return 4\n\n\nN = size()\n",
        "pkg/a.py": "import torch\nfrom pkg.h import N\n\n\n@torch.compile(fullgraph=True)\ndef f1(x):\n"
                    "    return x * N\n",
        "pkg/b.py": "import subprocess\nimport torch\nfrom pkg.h import N\n\n\n@torch.compile(fullgraph=True)\n"
                    "def f2(x):\n    if N > 3:\n        subprocess.run(['x'])\n    return x\n",
    }
    root, cache, first = _project(tmp_path, files)
    assert any(f.rule == "CL101" for f in first.findings)  # f2's guard is decided by size()'s value
    _edit(root / "pkg/h.py", "    return 4", "    _e = os.environ.get('E'); return 4")  # no line moves
    got = _check(root, cache)
    assert got.stats["result_cache"] == "incremental"
    assert got.stats["incremental"]["regions_walked"] == 0 and got.stats["incremental"]["regions_reused"] == 2
    # what it returns changed: the region whose guard reads it is walked again (f1 never evaluates N)
    _edit(root / "pkg/h.py", "return 4", "return 2")
    got = _check(root, cache)
    assert got.stats["incremental"]["regions_walked"] == 1
    assert not any(f.rule == "CL101" for f in got.findings)


def test_a_region_walked_again_works_out_only_the_nodes_the_edit_touched(tmp_path):
    """IncState.steps: a region walked again takes from the previous scan what visiting each node does, except
    for the nodes whose unit an edit made stale.  One region walks a chain of twelve helpers; an edit in the
    last adds a hazard there: the region is walked again, the last helper's steps (and those of the nodes
    that read what it returns, none here) are worked out again, the other twelve nodes are taken -- and the
    findings are a full scan's, in this run and in the next edit's (the state the incremental run wrote)."""
    n = 12
    lines = ["import os", "import torch", ""]
    for i in range(n):
        lines += ["", f"def h{i}(x):", f"    return h{i + 1}(x) + 1" if i + 1 < n else "    return x", ""]
    lines += ["", "@torch.compile(fullgraph=True)", "def region(x):", "    return h0(x)", ""]
    root, cache, _ = _project(tmp_path, {"pkg/__init__.py": "", "pkg/chain.py": "\n".join(lines)})
    _edit(root / "pkg" / "chain.py", "    return x\n", "    os.environ.get('E'); return x\n")
    got = _check(root, cache)
    inc = got.stats["incremental"]
    assert inc["regions_walked"] == 1
    assert inc["nodes_walked"] == 1 and inc["nodes_reused"] == n, inc
    assert any(f.rule == "CL201" for f in got.findings)
    _edit(root / "pkg" / "chain.py", "    return h5(x) + 1", "    return h5(x) + 2")  # from the state just written
    got = _check(root, cache)
    assert got.stats["incremental"]["nodes_walked"] == 1 and got.stats["incremental"]["nodes_reused"] == n


def test_a_call_added_beside_a_construction_leaves_what_its_readers_read(tmp_path):
    """A reader that looks only for calls spelled with a name (a dataclass's construction sites, which give its
    fields' values: FunctionSummary.calls_named) reads those calls, not the whole body: another call added to
    the function holding a construction changes nothing it read, so the region that reads the field is not
    walked again; a changed construction is."""
    files = {
        "pkg/__init__.py": "",
        "pkg/cfg.py": "import dataclasses\n\n\n@dataclasses.dataclass\nclass Cfg:\n    flag: bool = False\n",
        "pkg/make.py": "from pkg.cfg import Cfg\n\n\ndef build():\n    n = 1\n    return Cfg(flag=True)\n",
        "pkg/r.py": "import subprocess\nimport torch\nfrom pkg.make import build\n\nC = build()\n\n\n"
                    "@torch.compile(fullgraph=True)\ndef f(x):\n    if C.flag:\n        subprocess.run(['x'])\n"
                    "    return x\n",
    }
    root, cache, first = _project(tmp_path, files)
    assert [f.severity for f in first.findings if f.rule == "CL101"] == ["error"]  # the construction decides it
    _edit(root / "pkg/make.py", "n = 1", "n = print('built')")  # the construction does not move
    got = _check(root, cache)
    assert got.stats["result_cache"] == "incremental" and got.stats["incremental"]["regions_walked"] == 0
    _edit(root / "pkg/make.py", "Cfg(flag=True)", "Cfg(flag=False)")
    got = _check(root, cache)
    assert got.stats["incremental"]["regions_walked"] == 1
    assert not any(f.rule == "CL101" for f in got.findings)


def test_a_line_added_to_a_method_leaves_what_its_calls_gave_to_the_regions_that_read_them(tmp_path):
    """What a function's actions and a node's steps work out in its scope (the value of a local passed as an
    argument) is tagged with units of their own (tracking.track_reach), not with the units that read the
    whole body: one region walks ``K.forward``, the other reads only what it returns (a module-level
    constant, through ``cfg(n)``).  A line added to ``forward`` walks the first again, not the second (the
    bench site's muse_spark leaf: 13,816 units stale, 116 so); a changed local walks both."""
    files = {
        "pkg/__init__.py": "",
        "pkg/k.py": "import os\nimport torch\n\n\ndef cfg(n):\n    return n * 2\n\n\nclass K(torch.nn.Module):\n"
                    "    def forward(self, x):\n        n = 4\n        c = cfg(n)\n        return x * c\n\n\n"
                    "@torch.compile(fullgraph=True)\ndef r1(x):\n    return K()(x)\n",
        # (after k.py in the scan's order: its walk hits the values r1's walk worked out in forward's scope)
        "pkg/z.py": "import subprocess\nimport torch\nfrom pkg.k import K\n\nN = K().forward(1)\n\n\n"
                    "@torch.compile(fullgraph=True)\ndef r2(x):\n    if N > 3:\n        subprocess.run(['x'])\n"
                    "    return x\n",
    }
    root, cache, first = _project(tmp_path, files)
    assert [(f.rule, f.severity) for f in first.findings] == [("CL101", "error")]  # N is 8
    _edit(root / "pkg/k.py", "        n = 4", "        _e = os.environ.get('E'); n = 4")  # no line moves
    got = _check(root, cache)
    assert got.stats["result_cache"] == "incremental"
    assert got.stats["incremental"]["regions_walked"] == 1 and got.stats["incremental"]["regions_reused"] == 1
    _edit(root / "pkg/k.py", "n = 4", "n = 1")  # N is 2: r2's subprocess call never runs
    got = _check(root, cache)
    assert got.stats["incremental"]["regions_walked"] == 2
    assert not any(f.rule == "CL101" for f in got.findings)


def test_a_hook_registration_added_to_a_reached_function_is_walked(tmp_path):
    """Whether a function registers a module hook is asked of every node a walk reaches, and answered once per
    function (Reach._registers_hooks, a unit of its own): the region walked again after the registration is
    added meets the hook, as a scan without cache does."""
    files = {
        "pkg/__init__.py": "",
        "pkg/inst.py": "import os\n\n\ndef capture(mod, args, output):\n    os.path.exists('/capture')\n\n\n"
                       "def install(module):\n    n = 1\n    return module\n",
        "pkg/r.py": "import torch\nfrom pkg.inst import install\n\n\nclass Model(torch.nn.Module):\n"
                    "    def __init__(self):\n        super().__init__()\n        self.layer = torch.nn.Linear(4, 4)\n\n"
                    "    def forward(self, x):\n        install(self.layer)\n        return self.layer(x)\n\n\n"
                    "m = torch.compile(Model(), fullgraph=True)\n",
    }
    root, cache, first = _project(tmp_path, files)
    assert not [f for f in first.findings if f.callee == "os.path.exists"]
    _edit(root / "pkg/inst.py", "n = 1", "module.register_forward_hook(capture)")
    got = _check(root, cache)
    assert got.stats["result_cache"] == "incremental" and got.stats["incremental"]["regions_walked"] == 1
    (hit,) = [f for f in got.findings if f.callee == "os.path.exists"]
    assert hit.severity == "warning" and hit.trace[-1].qualname == "capture"
    _edit(root / "pkg/inst.py", "module.register_forward_hook(capture)", "n = 1")
    got = _check(root, cache)
    assert not [f for f in got.findings if f.callee == "os.path.exists"]


_PIECES = [b"a", b"ab", b"9", b"_", b"(", b")", b".", b" ", b"\n", b"class ", b":", b"A", b"B", b","]


@given(st.lists(st.sampled_from(_PIECES), max_size=30).map(b"".join),
       st.sampled_from([b"a", b"ab", b"_a", b"9a", b"A", b"AB", b"a.b", b"a(", b"class"]),
       st.sampled_from([(False, False), (True, False), (False, True)]))
@settings(max_examples=400, deadline=None)
def test_a_text_answers_mention_queries_as_the_locator_does(text, needle, kind):
    """stale_checks asks each changed file's words once (TextMentions); the answers are the regex search's."""
    from compile_lint.incstate import TextMentions, _mentions

    assert TextMentions(text).mentions(needle, *kind) == _mentions(text, needle, *kind)


def test_the_state_holds_one_object_per_value_of_the_walk_logs(tmp_path):
    """Each walk makes a new tuple of conditions, set of facts and parent link for each change it logs; the
    state keeps one object per value across every log (Incremental._compact_logs): the state is read and
    written whole at every run, and its cost goes by the number of objects."""
    from compile_lint import keptstates

    regions = "".join(f"\n\n@torch.compile(fullgraph=True)\ndef f{i}(x):\n    if x.shape[0] > 2:\n"
                      f"        return work(x)\n    return x\n" for i in range(3))
    root, cache, first = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "import torch\nfrom pkg.h import work\n" + regions,
        "pkg/h.py": "import subprocess\n\n\ndef probe(x):\n    subprocess.run(['nvcc'])\n    return x\n\n\n"
                    "def work(x):\n    return probe(x)\n",
    })
    assert len(first.regions) == 3
    (state,) = (cache / "results").glob("*.inc")
    st = keptstates.read_state(state)
    changes = [e for w in st.walks for log in w[4] for e in log.events if e.__class__ is tuple]
    assert any(e[3] for e in changes)  # (conditions on the paths: `if x.shape[0] > 2`)
    for field in (1, 2, 3, 4):  # child, parent link, conditions, facts
        ids: dict = {}
        for e in changes:
            ids.setdefault(e[field], set()).add(id(e[field]))
        assert all(len(v) == 1 for v in ids.values()), field
    assert len({id(e) for e in changes}) == len(set(changes))


def test_the_walk_logs_share_one_object_per_value_as_soon_as_each_walk_ends(tmp_path, monkeypatch):
    """Each walk makes a new parent link, tuple of conditions and set of facts for each change it logs, which
    an untracked scan drops with the walk; the tracked scan keeps them until its state is built, so each walk's
    new events share one object per value with the other logs as soon as it ends
    (Incremental._share_log_values): on the benchmark site the walk logs held 250 MB at the walks' end, 136 MB
    so."""
    from compile_lint import incremental, tracking, walkresults

    seen: dict = {}
    install, detach = incremental.Incremental.install, tracking.Tracker.detach

    def spy_install(self, *args):
        seen["inc"] = self
        return install(self, *args)

    def spy_detach(self):  # the walks' end, before the state is built from them
        inc = seen["inc"]
        # held as ints (lint/walkresults.py's LogPacker), the events' parts numbered by identity: made
        # objects again, they are the very objects the walks shared
        seen["packed"] = [log.events.__class__.__name__ for w in inc.walks for log in w[4]]
        inc._log_packer.unpack_all(inc.walks)
        seen["changes"] = [e for w in inc.walks for log in w[4] for e in log.events if e.__class__ is tuple]
        seen["walks"] = list(seen["inc"].walks)
        return detach(self)

    monkeypatch.setattr(incremental.Incremental, "install", spy_install)
    monkeypatch.setattr(tracking.Tracker, "detach", spy_detach)
    regions = "".join(f"\n\n@torch.compile(fullgraph=True)\ndef f{i}(x):\n    if x.shape[0] > 2:\n"
                      f"        return work(x)\n    return x\n" for i in range(3))
    _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "import torch\nfrom pkg.h import work\n" + regions,
        "pkg/h.py": "import subprocess\n\n\ndef probe(x):\n    subprocess.run(['nvcc'])\n"
                    "    subprocess.check_output(['nvcc'])\n    return x\n\n\ndef work(x):\n    return probe(x)\n",
    })
    changes = seen["changes"]
    assert seen["packed"] and set(seen["packed"]) == {"array"}
    assert sum(1 for e in changes if e[3]) >= 3  # (each region's path to `work` is under its `if`)
    for field in (1, 2, 3, 4):  # child, parent link, conditions, facts
        ids: dict = {}
        for e in changes:
            ids.setdefault(e[field], set()).add(id(e[field]))
        assert all(len(v) == 1 for v in ids.values()), field
    # and the regions' findings kept for the state are held as ints as each walk ends (a full scan builds its
    # state after the answer: lint/walkresults.py), slotted once made objects again (lint/findings.py), and
    # sharing one object per value of their frames, conditions and regions
    walks = seen["walks"]
    assert walks and all(type(walk[3]) is walkresults.Packed for walk in walks)
    seen["inc"]._packer.unpack_all(walks)
    found = [f for walk in walks for f in walk[3][0]]
    assert found and not any(hasattr(f, "__dict__") for f in found)
    for part in (lambda f: f.region, lambda f: f.message):
        ids: dict = {}
        for f in found:
            ids.setdefault(part(f), set()).add(id(part(f)))
        assert all(len(v) == 1 for v in ids.values())
    for parts in ([fr for f in found for fr in f.trace], [c for f in found for c in f.conditions]):
        ids = {}
        for p in parts:
            ids.setdefault(p, set()).add(id(p))
        assert len(ids) < len(parts) and all(len(v) == 1 for v in ids.values())


def test_the_context_caps_log_holds_one_object_per_context():
    """A call makes its context anew each time it is met (a tuple of value sets); the caps' log keeps every
    meeting, so it holds the first object of each value (the bench site's 92,775 meetings held 197 MB at the
    walks' end, 37 MB so) -- past the cap too, where an untracked scan widens the context and drops it."""
    from compile_lint.tracking import Tracker, TrackedContextCaps

    caps = TrackedContextCaps(Tracker(), "call", 1)

    def context(name):  # made at run time: equal values, distinct objects
        return tuple([frozenset([name])])

    first, again = context("x"), context("x")
    assert first == again and first is not again
    past, past_again = context("y"), context("y")
    assert caps.admit("f", first) and caps.admit("f", again)
    assert not caps.admit("f", past) and not caps.admit("f", past_again)
    (events,) = [evs for _, evs in caps.log["f"]]
    assert [c for c, _ in events] == [first, first, past, past]
    assert [id(c) for c, _ in events] == [id(first), id(first), id(past), id(past)]


def test_a_closed_unit_keeps_its_reads_as_item_ids():
    """Each read makes its item anew (``("fl", "module:qualname", name)``); a unit that closes keeps the
    items' ids in the table that becomes the state's (IncState.items), in the flat tables (lint/units.py; the
    bench site's 1.4 M units held 5.9 M item tuples at the walks' end, kept as items)."""
    from compile_lint.tracking import ROOT, Tracker

    previous = {("f", "m", "old"): 0}  # an incremental scan's table: the previous state's, grown in place
    t = Tracker(first_id=7, item_ids=previous)
    units = []
    for _ in range(2):
        units.append(t.open())
        t.cur_reads.add(("f", "m", "g"))
        t.cur_reads.add(("fl", "m:g", "x"))
        t.cur_reads.add(("f", "m", "old"))
        t.cur_uses.add(ROOT)
        t.close()
    a, b = (t.reads[u] for u in units)
    assert t.item_ids is previous and set(previous.values()) == set(range(len(previous)))
    assert all(type(i) is int for i in a)
    assert {it for it, i in previous.items() if i in a} == {("f", "m", "g"), ("fl", "m:g", "x"), ("f", "m", "old")}
    assert previous[("f", "m", "old")] == 0  # the previous scan's ids stay
    assert a == b and t.uses[units[0]] == t.uses[units[1]] == (ROOT,)
    assert ROOT not in t.reads and t.open_reads == {ROOT: set()}  # (the root stays open; a closed unit's set goes)


def _state_fields(st) -> dict:
    """What the post-walk steps could add to a state: units and their reads, the root's reads and uses, loads,
    checks, contexts met."""
    return {"reads": dict(st.reads), "uses": dict(st.uses), "checks": dict(st.checks), "loaded": list(st.loaded),
            "modinfo": sorted(st.modinfo), "root_modules": st.root_modules, "roots": st.roots,
            "contexts": dict(st.contexts), "items": dict(st.items), "next_id": st.next_id}


def test_a_full_scans_state_built_after_its_answer_is_the_one_its_walks_left(tmp_path, monkeypatch):
    """A full scan's state is built when it is written (incstate.PendingState: by the child writing behind
    the command, after the answer), once the post-walk steps have run on the tracked program -- they read
    modules outside any unit, whose reads the root's would carry.  The tracker, detached at the walks' end
    (Tracker.detach), keeps them out: the state written is the one built at the walks' end."""
    from compile_lint import engine, keptstates
    from compile_lint.incstate import PendingState

    at_walks_end = []

    class BuiltTwice(PendingState):
        def __init__(self, build):
            super().__init__(build)
            at_walks_end.append(_state_fields(build()))

    monkeypatch.setattr(engine, "PendingState", BuiltTwice)
    root = tmp_path / "cases"
    shutil.copytree(CASES, root)
    cache = tmp_path / "cache"
    assert _scan(root, cache).stats["result_cache"] == "miss" and len(at_walks_end) == 1
    (state,) = (cache / "results").glob("*.inc")
    assert _state_fields(keptstates.read_state(state)) == at_walks_end[0]


def test_a_detached_tracker_makes_no_unit_and_keeps_no_read():
    """After Tracker.detach, a unit asked for runs its function plainly, and what is read, used, loaded or
    met goes nowhere the state looks."""
    from compile_lint.contexts import ContextCaps
    from compile_lint.tracking import ROOT, TrackedContextCaps, TrackedMemo, Tracker

    t = Tracker()
    memo = TrackedMemo(t)
    caps = TrackedContextCaps(t, "call", 2)
    uid = t.open()
    memo["k"] = 1
    caps.admit("f", ("ctx", 1))
    t.close()
    root_reads, root_uses, units = set(t.open_reads[ROOT]), set(t.open_uses[ROOT]), dict(t.reads)
    log = {k: [(top, list(evs)) for top, evs in v] for k, v in caps.log.items()}
    t.detach()
    assert t.frame(lambda x: x + 1, 1) == 2 and t.run(lambda: "r") == (ROOT, "r")
    t.cur_reads.add(("m", "late"))
    assert memo["k"] == 1  # (a use of the unit that made it, by nobody)
    assert caps.admit("f", ("ctx", 2)) == ContextCaps(2).admit("f", ("ctx", 2))
    assert t.open_reads[ROOT] == root_reads and t.open_uses[ROOT] == root_uses and dict(t.reads) == units
    assert {k: [(top, list(evs)) for top, evs in v] for k, v in caps.log.items()} == log and uid in units


def test_memo_entries_made_in_a_row_of_one_value_in_one_unit_share_their_tag_pair():
    """A memo entry is held as (value, the unit that made it); a unit making several entries of one value in a
    row (an expression's value under each of its keys) held a pair each -- 1,375,017 pairs at the bench site's
    walks' end, 1,170,278 objects now.  Another value or another unit is a pair of its own, and every entry
    still answers its value and tags its unit."""
    from compile_lint.tracking import TrackedMemo, Tracker

    t = Tracker()
    memo, other = TrackedMemo(t), TrackedMemo(t)
    value = frozenset({"v"})
    u1 = t.open()
    memo["a"] = value
    memo["b"] = value
    other["c"] = value  # (another table of the same scan: the same unit made it)
    memo["d"] = frozenset({"w"})
    t.close()
    u2 = t.open()
    memo["e"] = value
    t.close()
    pair = dict.__getitem__(memo, "a")
    assert pair == (value, u1) and dict.__getitem__(memo, "b") is pair and dict.__getitem__(other, "c") is pair
    assert dict.__getitem__(memo, "d") == (frozenset({"w"}), u1)
    assert dict.__getitem__(memo, "e") == (value, u2) and dict.__getitem__(memo, "e") is not pair
    u3 = t.open()
    assert memo["b"] is value and memo["e"] is value
    t.close()
    assert set(t.uses[u3]) == {u1, u2}


@st.composite
def _unit_graphs(draw):
    """A state's units and what each used: every unit lies below a root (a top unit, or one run outside any:
    IncState.roots) through earlier units, plus edges in any direction (cycles: a memo hit on an entry still
    being made, roots used too), and the units an edit's scan kept."""
    n = draw(st.integers(1, 40))
    uses: dict = {u: set() for u in range(1, n + 1)}
    roots = {1}
    for u in range(2, n + 1):
        if draw(st.booleans()):
            for user in draw(st.lists(st.integers(1, u - 1), min_size=1, max_size=3)):
                uses[user].add(u)
        else:
            roots.add(u)
    for a, b in draw(st.lists(st.tuples(st.integers(1, n), st.integers(1, n)), max_size=n)):
        uses[a].add(b)
    kept = set(draw(st.lists(st.integers(1, n), max_size=n)))
    # a unit that read and used nothing is in no state, though others name it among what they used
    absent = {u for u in draw(st.sets(st.integers(1, n))) if not uses[u]}
    return {u: tuple(sorted(v)) for u, v in uses.items() if u not in absent}, frozenset(roots), kept


@given(_unit_graphs())
@settings(max_examples=300, deadline=None)
def test_the_units_an_edit_leaves_dead_are_those_no_kept_unit_reaches(graph):
    """Incremental._dead_old looks for the dead units down from the unused ones and up from each candidate;
    they are exactly those that marking everything below the kept units leaves unmarked."""
    from compile_lint.incremental import Incremental
    from compile_lint.incstate import IncState

    uses, roots, kept = graph
    state = IncState(reads={u: (u,) for u in uses}, uses=uses, checks={}, finds={}, walks=[], loaded=[],
                     candidates=(), roots=roots)
    inc = Incremental()
    inc.old, inc.kept = state, kept
    live, todo = set(), list(kept)
    while todo:
        u = todo.pop()
        if u not in live:
            live.add(u)
            todo.extend(uses.get(u, ()))
    assert inc._dead_old() == set(uses) - live


def test_a_full_scan_where_an_incremental_one_was_asked_for_says_why_in_its_stats(corpus):
    """``result_cache_miss`` (--stats) names what made a scan with --incremental a full one: the user who
    expected an edit's answer in seconds sees whether a file was added, or the state was made without
    --incremental.  An incremental answer names nothing."""
    root, cache = corpus
    edit = ("helpers_pkg/jit_env.py", 'return torch.version.cuda or "0.0"', 'return os.environ.get("CUDA_V") or "0.0"')
    _edit(root / edit[0], edit[1], edit[2])
    got = _scan(root, cache)
    assert got.stats["result_cache"] == "incremental" and "result_cache_miss" not in got.stats
    (root / "helpers_pkg" / "added.py").write_text("x = 1\n")
    got = _scan(root, cache)
    assert (got.stats["result_cache"], got.stats["result_cache_miss"]) == ("miss", "files were added or removed")
    _edit(root / edit[0], edit[2], edit[1])
    plain = _scan(root, cache, incremental=False)  # a result with no state beside it
    assert plain.stats["result_cache_miss"] == f"a file changed: {root / edit[0]}"
    _edit(root / edit[0], edit[1], edit[2])
    got = _scan(root, cache)
    assert got.stats["result_cache"] == "miss"
    assert got.stats["result_cache_miss"].startswith("no incremental state beside the result")
    assert _findings(got) == _findings(_scan(root, None))
    fresh = _scan(root, cache.parent / "empty-cache")
    assert fresh.stats["result_cache_miss"] == "no result of a scan with these options and this analyzer"


def test_a_replay_keeps_the_findings_of_the_other_fix_points_of_a_touched_hazard_in_the_order_first_met(tmp_path):
    """One hazard below two cached loaders: two findings that sort alike (one per fix point), in the order the
    walk first met them.  A same-line edit in the first loader moves its call of ``build``: the replay makes
    again that fix point's report, and the other's previous finding stands in for its own (Touched.kept) --
    in the order a scan without cache gives, with the kept visits counted kept."""
    root, cache, first = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/core.py": "import subprocess\n\n\ndef build():\n    return subprocess.run(['nvcc', '--version'])\n",
        "pkg/loaders.py": "import functools\nfrom pkg.core import build\n\n\n@functools.cache\ndef load_b():\n"
                          "    return build()\n\n\n@functools.cache\ndef load_a():\n    return build()\n",
        "pkg/model.py": "import torch\nfrom pkg.loaders import load_a, load_b\n\n\n@torch.compile(fullgraph=True)\n"
                        "def f(x):\n    load_b()\n    load_a()\n    return x\n",
    })
    at_build = [(f["fix_point"], f["line"]) for f in _findings(first) if f["path"].endswith("core.py")]
    assert [fp for fp, _ in at_build] == ["load_b", "load_a"] and len({line for _, line in at_build}) == 1
    loaders = root / "pkg/loaders.py"
    original = loaders.read_text()
    for name in ("load_b", "load_a"):
        _edit(loaders, f"def {name}():\n    return build()",
              f"def {name}():\n    _e = __import__('os').environ.get('E'); return build()")
        got = _check(root, cache)
        inc = got.stats["incremental"]
        assert inc["regions_replayed"] == inc["replays_indexed"] == 1 and inc["visits_kept"] > 0, name
        _write(loaders, original)
        _check(root, cache)
