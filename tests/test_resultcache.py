"""The result cache (lint/resultcache.py): a scan whose inputs did not change is answered without a walk, and
every kind of change that could alter the result makes it scan again."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compile_lint.engine import ScanOptions, scan

from ecosystem_util import COMPILE_LINT, make_project


def _scan(root: Path, cache: Path, **kw):
    opts = dict(paths=[root / "pkg"], use_environment=False, cache_dir=cache, use_result_cache=True, incremental=True,
                use_installed_torch=False)
    opts.update(kw)
    return scan(ScanOptions(**opts))


def _facts(result) -> list:
    return [(f.rule, Path(f.path).name, f.line, [fr.qualname for fr in f.trace]) for f in result.findings]


def _bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


@pytest.fixture
def project(tmp_path):
    return make_project(tmp_path / "proj")


def test_unchanged_tree_is_a_hit_with_the_same_findings(project, tmp_path):
    cache = tmp_path / "cache"
    first = _scan(project, cache)
    assert first.stats["result_cache"] == "miss" and first.stats["files_parsed"] >= 2
    assert [f[0] for f in _facts(first)] == ["CL101"]
    second = _scan(project, cache)
    assert second.stats["result_cache"] == "hit"
    assert second.stats["files_parsed"] == 0 and second.program is None
    assert _facts(second) == _facts(first)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not importable")
def test_a_first_scan_keys_its_entry_once_the_rules_dumped_behind_it_are_read(project, tmp_path, monkeypatch):
    """An empty cache: the installed torch's trace rules are dumped (some 4 s) while the scan finds its files
    and starts the pool, and the entry it writes is the one the next scan, reading the rules first (from their
    cache), looks up."""
    from compile_lint import engine
    from compile_lint.dynamo import trace_rules as TR
    from compile_lint.resultcache import NO_RESULT

    events = []
    real_result, real_prefetch = TR.PendingTraceRules.result, engine.prefetch
    monkeypatch.setattr(TR.PendingTraceRules, "result", lambda self: events.append(("rules", self.ready))
                        or real_result(self))
    monkeypatch.setattr(engine, "prefetch", lambda *a, **k: events.append(("prefetch", None)) or real_prefetch(*a, **k))
    TR.clear_memo()
    try:
        cache = tmp_path / "cache"
        first = _scan(project, cache, use_installed_torch=True)
        assert events[:2] == [("prefetch", None), ("rules", False)]  # read after the pool began, still dumping
        assert first.stats["result_cache"] == "miss" and first.stats["result_cache_miss"] == NO_RESULT
        assert "installed at" in first.trace_rules_source and "cached" not in first.trace_rules_source
        TR.clear_memo()
        events.clear()
        second = _scan(project, cache, use_installed_torch=True)
        assert events[0] == ("rules", True)  # from their cache, before the entry is looked up
        assert second.stats["result_cache"] == "hit" and "cached" in second.trace_rules_source
        assert _facts(second) == _facts(first)
    finally:
        TR.clear_memo()


def test_a_cache_holds_no_result_until_one_is_on_disk_or_kept_to_be_written_there(tmp_path, monkeypatch):
    """What lets a first scan read the trace rules late (holds_no_result): another cache's result kept by this
    process to be written is not this cache's."""
    from compile_lint import keptstates
    from compile_lint.cache import SummaryCache
    from compile_lint.resultcache import holds_no_result

    cache = SummaryCache(tmp_path / "c")
    assert holds_no_result(cache) and holds_no_result(SummaryCache(None))
    monkeypatch.setitem(keptstates._PENDING_RESULTS, str(tmp_path / "other" / "results" / "k.pkl"), None)
    assert holds_no_result(cache)
    (cache.root / "results").mkdir(parents=True)
    (cache.root / "results" / "state-k.tmp").write_bytes(b"")  # not an entry
    assert holds_no_result(cache)
    monkeypatch.setitem(keptstates._PENDING_RESULTS, str(cache.root / "results" / "k.pkl"), None)
    assert not holds_no_result(cache)
    monkeypatch.delitem(keptstates._PENDING_RESULTS, str(cache.root / "results" / "k.pkl"))
    (cache.root / "results" / "k.pkl").write_bytes(b"")
    assert not holds_no_result(cache)


def test_a_touched_file_is_still_a_hit(project, tmp_path):
    cache = tmp_path / "cache"
    first = _scan(project, cache)
    _bump_mtime(project / "pkg" / "helpers.py")
    again = _scan(project, cache)
    assert again.stats["result_cache"] == "hit" and again.stats["files_parsed"] == 0
    assert _facts(again) == _facts(first)


def test_a_comment_edit_reindexes_one_file_and_keeps_the_result(project, tmp_path):
    cache = tmp_path / "cache"
    first = _scan(project, cache)
    helpers = project / "pkg" / "helpers.py"
    helpers.write_text(helpers.read_text() + "\n# a comment changes no summary\n")
    _bump_mtime(helpers)
    again = _scan(project, cache)
    assert again.stats["result_cache"] == "hit" and again.stats["files_parsed"] == 1
    assert _facts(again) == _facts(first)
    # the manifest learnt the new stat: the next run parses nothing
    assert _scan(project, cache).stats["files_parsed"] == 0


def test_a_code_edit_rescans_and_reports_the_new_hazard(project, tmp_path):
    cache = tmp_path / "cache"
    _scan(project, cache)
    helpers = project / "pkg" / "helpers.py"
    helpers.write_text(helpers.read_text().replace("    return x\n", "    import os\n    os.path.exists('/x')\n"
                                                                        "    return x\n"))
    _bump_mtime(helpers)
    again = _scan(project, cache)
    # the region reaching the edited function is walked again (lint/incremental.py)
    assert again.stats["result_cache"] == "incremental" and again.stats["incremental"]["regions_walked"] == 1
    assert sorted(f[0] for f in _facts(again)) == ["CL101", "CL102"]


def test_an_edit_that_only_moves_lines_rescans(project, tmp_path):
    """Line numbers are in the report: a blank line above the hazard moves it, so the summary changes."""
    cache = tmp_path / "cache"
    first = _scan(project, cache)
    helpers = project / "pkg" / "helpers.py"
    helpers.write_text("\n" + helpers.read_text())
    _bump_mtime(helpers)
    again = _scan(project, cache)
    assert again.stats["result_cache"] == "incremental"
    assert [f[2] for f in _facts(again)] == [f[2] + 1 for f in _facts(first)]


@pytest.mark.parametrize("change", ["new file", "deleted file"])
def test_a_new_or_deleted_file_rescans(project, tmp_path, change):
    cache = tmp_path / "cache"
    _scan(project, cache)
    if change == "new file":
        (project / "pkg" / "extra.py").write_text("import torch\n\n\n@torch.compile\ndef g(x):\n    print(x)\n"
                                                  "    return x\n")
    else:
        (project / "pkg" / "__init__.py").unlink()
    again = _scan(project, cache)
    assert again.stats["result_cache"] == "miss"
    if change == "new file":
        assert "CL108" in [f[0] for f in _facts(again)]


def test_other_options_do_not_share_an_entry(project, tmp_path):
    cache = tmp_path / "cache"
    _scan(project, cache)
    other = _scan(project, cache, ignore=["CL101"])
    assert other.stats["result_cache"] == "miss" and not other.findings
    assert _scan(project, cache).stats["result_cache"] == "hit"  # the first entry is still there


def test_a_change_outside_the_scanned_paths_rescans(tmp_path):
    """A module the walk loaded from the search path is part of the result: editing it is a miss."""
    lib = tmp_path / "lib"
    (lib / "helperlib").mkdir(parents=True)
    (lib / "helperlib" / "__init__.py").write_text("def work(x):\n    return x\n")
    app = tmp_path / "app"
    (app / "pkg").mkdir(parents=True)
    (app / "pkg" / "__init__.py").write_text("")
    (app / "pkg" / "model.py").write_text("import torch\nfrom helperlib import work\n\n\n"
                                          "@torch.compile(fullgraph=True)\ndef f(x):\n    return work(x)\n")
    cache = tmp_path / "cache"
    first = _scan(app, cache, search_path=[lib])
    assert not first.findings
    assert _scan(app, cache, search_path=[lib]).stats["result_cache"] == "hit"
    init = lib / "helperlib" / "__init__.py"
    init.write_text("import subprocess\n\n\ndef work(x):\n    subprocess.run(['nvcc'])\n    return x\n")
    _bump_mtime(init)
    again = _scan(app, cache, search_path=[lib])
    assert again.stats["result_cache"] == "incremental"
    assert [f[0] for f in _facts(again)] == ["CL101"]


def test_a_corrupt_entry_is_a_miss_and_is_rebuilt(project, tmp_path):
    cache = tmp_path / "cache"
    first = _scan(project, cache)
    (entry,) = (cache / "results").glob("*.pkl")
    entry.write_bytes(b"\x80\x04not a pickle")
    again = _scan(project, cache)
    assert again.stats["result_cache"] == "miss"
    assert any("corrupt result cache entry" in why for _, why in again.problems)
    assert _facts(again) == _facts(first)
    assert _scan(project, cache).stats["result_cache"] == "hit"


def test_a_corrupt_incremental_state_is_a_full_scan(project, tmp_path):
    cache = tmp_path / "cache"
    first = _scan(project, cache)
    (state,) = (cache / "results").glob("*.inc")
    state.write_bytes(b"\x80\x04not a pickle")
    helpers = project / "pkg" / "helpers.py"
    helpers.write_text(helpers.read_text().replace("    return x\n", "    return x + 1\n"))
    _bump_mtime(helpers)
    again = _scan(project, cache)
    assert again.stats["result_cache"] == "miss"
    assert any("corrupt incremental state" in why for _, why in again.problems)
    assert _facts(again) == _facts(first)


def test_a_state_that_cannot_be_written_leaves_no_file_behind(tmp_path):
    """The state is pickled straight into a temporary file (ResultCache._write_blob): a failure half-way is
    reported, and neither the temporary file nor a state beside the result is left."""
    from compile_lint.resultcache import ResultCache

    class Breaks:
        def header(self):  # (IncState.header: pickled first)
            return {}, tuple(range(100_000))

        def __reduce__(self):
            raise RuntimeError("not picklable here")

    rc = ResultCache.__new__(ResultCache)
    rc.problems = []
    target = tmp_path / "results" / "entry.inc"
    rc._write_blob(target, Breaks())  # the failure after the header's frames were written
    assert not target.exists() and list((tmp_path / "results").iterdir()) == []
    assert rc.problems and "cannot write incremental state" in rc.problems[0][1]


def test_the_cli_answers_a_second_scan_from_the_result_cache(project, tmp_path):
    """`compile-lint scan` uses the result cache; `--fix` / `--diff` do not (they need the program)."""
    cmd = [COMPILE_LINT, "scan", str(project / "pkg"), "--no-environment", "--cache-dir", str(tmp_path / "c"),
           "--format", "json", "-q"]
    runs = [subprocess.run(cmd, capture_output=True, text=True, timeout=300) for _ in range(2)]
    import json

    docs = [json.loads(r.stdout) for r in runs]
    assert [d["stats"]["result_cache"] for d in docs] == ["miss", "hit"]
    assert docs[0]["findings"] == docs[1]["findings"]
    diff = subprocess.run(cmd[:-3] + ["--diff", "-q"], capture_output=True, text=True, timeout=300)
    assert "compile_lint" in diff.stdout or "torch.library" in diff.stdout or diff.returncode in (0, 1), diff.stderr
    assert "Traceback" not in diff.stderr


def test_results_are_the_same_whatever_the_hash_seed(project, tmp_path):
    """The console script pins PYTHONHASHSEED (lint/cli.py: entry): a run under another seed re-executes."""
    cmd = [COMPILE_LINT, "scan", str(project / "pkg"), "--no-environment", "--no-cache", "--format", "json", "-q"]
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.append(subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env))
    assert outs[0].returncode == outs[1].returncode == 1, outs[0].stderr
    assert outs[0].stdout == outs[1].stdout


def test_the_console_script_reexecutes_with_a_pinned_seed_and_a_safe_path(monkeypatch):
    import compile_lint.cli as cli

    calls = []

    def fake_execve(exe, argv, env):
        calls.append((exe, argv, env))
        raise OSError("stop here")  # entry() then runs main itself: make that a no-op

    monkeypatch.setattr(os, "execve", fake_execve)
    monkeypatch.setattr(cli, "main", lambda **kw: None)
    exits = []
    monkeypatch.setattr(cli, "_leave", exits.append)  # the real one ends the process (os._exit)
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    monkeypatch.delenv("COMPILE_LINT_NO_REEXEC", raising=False)
    monkeypatch.setattr("sys.argv", ["compile-lint", "scan", "x"])
    cli.entry()
    (exe, argv, env), = calls
    assert env["PYTHONHASHSEED"] == "0" and argv[-2:] == ["scan", "x"]
    assert argv[1] == "-c" and argv[2].startswith("import sys; del sys.path[0];")  # the cwd never shadows
    calls.clear()
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    cli.entry()
    assert not calls  # already pinned: no second exec
    assert exits == [0, 0]


def test_the_results_directory_keeps_the_newest_entries_and_this_scans(project, tmp_path):
    """Every analyzer version and set of options writes an entry of its own (a site-packages' state: some
    270 MB); a write keeps the directory's newest MAX_RESULT_ENTRIES, its own always, and drops each removed
    entry's state with it, states left without a result and a killed writer's day-old temporary files."""
    import time

    from compile_lint.resultcache import MAX_RESULT_ENTRIES

    cache = tmp_path / "cache"
    results = cache / "results"
    results.mkdir(parents=True)
    now = time.time()
    old = []
    for i in range(MAX_RESULT_ENTRIES + 3):  # entry 0 the newest of them
        for suffix in (".pkl", ".inc"):
            p = results / f"old{i:02d}{suffix}"
            p.write_bytes(b"x")
            os.utime(p, (now - 3600 * (i + 1), now - 3600 * (i + 1)))
        old.append(f"old{i:02d}")
    orphan, temp, fresh_temp = results / "gone.inc", results / ".tmp-dead", results / ".tmp-writing"
    for p, age in ((orphan, 2 * 86400), (temp, 2 * 86400), (fresh_temp, 60)):
        p.write_bytes(b"x")
        os.utime(p, (now - age, now - age))
    first = _scan(project, cache)
    assert first.stats["result_cache"] == "miss"
    left = sorted(p.name for p in results.iterdir())
    mine = [n for n in left if n.endswith(".pkl") and not n.startswith("old")]
    assert len(mine) == 1 and len([n for n in left if n.startswith(mine[0][:-4] + ".") and n.endswith(".inc")]) == 1
    kept = old[:MAX_RESULT_ENTRIES - 1]
    assert sorted(n for n in left if n.startswith("old")) == sorted(k + s for k in kept for s in (".inc", ".pkl"))
    assert not orphan.exists() and not temp.exists() and fresh_temp.exists()
    assert _scan(project, cache).stats["result_cache"] == "hit"


def test_a_scan_before_a_warm_process_wrote_its_result_finds_the_state_of_the_result_it_reads(project, tmp_path,
                                                                                             monkeypatch):
    """A warm process (the daemon) writes its result and state after answering.  Each state has a name of its
    own, named by its result (Manifest.state), and the previous one is removed only once the new result is in
    place: a scan in another process meanwhile reads the previous result and finds its state -- an
    incremental scan, not a full one (the previous state used to be removed when the new result was made).
    Once written, one state is left: the new result's."""
    import json
    import sys

    from compile_lint import keptstates

    cache = tmp_path / "cache"
    _scan(project, cache)
    helpers = project / "pkg" / "helpers.py"
    original = helpers.read_text()
    monkeypatch.setattr(keptstates, "_KEPT_STATES", {})
    helpers.write_text(original.replace("    return x\n", "    return x + 1\n"))
    _bump_mtime(helpers)
    assert _scan(project, cache).stats["result_cache"] == "incremental"  # answered; nothing written yet
    helpers.write_text(original.replace("    return x\n", "    return x + 2\n"))
    _bump_mtime(helpers)
    other = subprocess.run(
        [sys.executable, "-c", "import json, sys; from pathlib import Path; sys.path[:0] = sys.argv[1:2]; "
                               "from test_resultcache import _scan; "
                               "print(json.dumps(_scan(Path(sys.argv[2]), Path(sys.argv[3])).stats))",
         str(Path(__file__).parent), str(project), str(cache)], capture_output=True, text=True, timeout=300)
    assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout.splitlines()[-1])["result_cache"] == "incremental"
    assert keptstates.write_kept_states() == []
    states = sorted(p.name for p in (cache / "results").glob("*.inc"))
    monkeypatch.setattr(keptstates, "_KEPT_STATES", None)
    assert len(states) == 1
    helpers.write_text(original)
    _bump_mtime(helpers)
    assert _scan(project, cache).stats["result_cache"] == "incremental"


def _behind_env() -> dict:
    return dict(os.environ, COMPILE_LINT_WRITE_BEHIND="1")  # (the suite turns it off: conftest)


def test_a_scan_writes_its_cache_entry_behind_it_and_the_next_scan_waits_for_it(project, tmp_path):
    """The command's own process answers, then a child writes the result and state (cli._write_behind),
    holding the results directory locked meanwhile; a scan reads the directory only once no writer holds it
    (keptstates.no_writer), so it finds the entry the last command made, never the one before it."""
    import json

    from compile_lint import keptstates

    cache = tmp_path / "c"
    cmd = [COMPILE_LINT, "scan", str(project / "pkg"), "--no-environment", "--cache-dir", str(cache), "--format",
           "json", "-q", "--incremental"]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=_behind_env())
    assert first.returncode == 1 and json.loads(first.stdout)["stats"]["result_cache"] == "miss"
    with keptstates.no_writer(cache / "results"):  # (the child is done once it lets go)
        assert len(list((cache / "results").glob("*.pkl"))) == 1
        assert len(list((cache / "results").glob("*.inc"))) == 1
    helpers = project / "pkg" / "helpers.py"
    helpers.write_text(helpers.read_text().replace("    return x\n", "    return x + 1\n"))
    _bump_mtime(helpers)
    held = keptstates.hold_for_writing({str(cache / "results")})  # as a writer still writing would
    try:
        second = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=_behind_env())
        with pytest.raises(subprocess.TimeoutExpired):
            second.wait(timeout=3)  # waiting for the writer
    finally:
        for fd in held:
            os.close(fd)
    out, err = second.communicate(timeout=300)
    assert second.returncode == 1, err
    assert json.loads(out)["stats"]["result_cache"] == "incremental"
    third = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=_behind_env())
    assert json.loads(third.stdout)["stats"]["result_cache"] == "hit"  # the second's entry, written behind it


def test_a_warm_process_answers_a_hit_from_the_result_it_kept_unless_another_process_wrote_the_entry(
        project, tmp_path, monkeypatch):
    """The daemon answers a hit from the result it last read or wrote (unpickling the pre-commit hook's was
    0.76 s of a 2 s hit), a copy each time: what a command does with it (filtering, counting) does not reach
    the next answer.  An entry another process wrote since is read from its file."""
    from compile_lint import keptstates, resultcache

    cache = tmp_path / "cache"
    first = _scan(project, cache)
    monkeypatch.setattr(keptstates, "_KEPT_STATES", {})
    monkeypatch.setattr(keptstates, "_WARM", True)
    monkeypatch.setattr(keptstates, "_KEPT_RESULTS", {})
    reads = []
    real_unpickle = resultcache.ResultCache._unpickle
    monkeypatch.setattr(resultcache.ResultCache, "_unpickle",
                        lambda self, fh: reads.append(fh.tell()) or real_unpickle(self, fh))
    hit = _scan(project, cache)
    assert hit.stats["result_cache"] == "hit" and len(reads) == 2  # the manifest, then the result
    hit.findings = []  # what a command may do with its copy
    hit.stats["findings"] = 0
    again = _scan(project, cache)
    assert again.stats["result_cache"] == "hit" and len(reads) == 3  # the manifest only
    assert _facts(again) == _facts(first) and again.stats["findings"] == len(first.findings)
    # another process writes the entry (a scan of an edit, then of the undo): read from the file again
    helpers = project / "pkg" / "helpers.py"
    original = helpers.read_text()
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent))
    for text in (original.replace("    return x\n", "    return x + 1\n"), original):
        helpers.write_text(text)
        _bump_mtime(helpers)
        subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; from test_resultcache import "
                        "_scan; _scan(Path(sys.argv[1]), Path(sys.argv[2]))", str(project), str(cache)],
                       env=env, check=True, timeout=300)
    before = len(reads)
    third = _scan(project, cache)
    assert third.stats["result_cache"] == "hit" and len(reads) == before + 2
    assert _facts(third) == _facts(first)


def test_a_hit_in_a_process_of_its_own_writes_the_findings_texts_kept_with_the_entry(project, tmp_path):
    """The entry written behind a JSON report keeps that report's findings texts (report.texts_of): a hit in
    a process of its own writes them instead of encoding the findings again (0.32 s of a 1.25 s warm scan of
    the bench site).  They are taken for the entry's own findings list only, with the same roots; the
    report is the same bytes."""
    import json

    from compile_lint import keptstates, resultcache

    cache = tmp_path / "c"
    cmd = [COMPILE_LINT, "scan", str(project / "pkg"), "--no-environment", "--cache-dir", str(cache), "--format",
           "json", "-q"]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=_behind_env())
    assert json.loads(first.stdout)["stats"]["result_cache"] == "miss"
    with keptstates.no_writer(cache / "results"):
        (entry,) = (cache / "results").glob("*.pkl")
        manifest, result = resultcache.loads_result(entry.read_bytes())
    roots, findings, texts = result.json_texts
    assert findings is result.findings and len(texts) == len(findings) == 1
    assert json.loads(texts[0]) == json.loads(first.stdout)["findings"][0]
    hit = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=_behind_env())
    assert json.loads(hit.stdout)["stats"]["result_cache"] == "hit"
    assert json.loads(hit.stdout)["findings"] == json.loads(first.stdout)["findings"]
    # what a hit writes is the kept text (planted here), not the finding encoded again
    planted = json.dumps(dict(json.loads(texts[0]), message="kept text"))
    result.json_texts = (roots, result.findings, [planted])
    resultcache._pickle_to(entry, manifest, result)
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=_behind_env())
    assert json.loads(again.stdout)["findings"][0]["message"] == "kept text"
    # another working directory writes other relative paths: encoded again
    elsewhere = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=_behind_env(), cwd=tmp_path)
    assert json.loads(elsewhere.stdout)["findings"][0]["message"] != "kept text"


def test_a_state_whose_header_is_planted_is_a_scan_not_a_traceback(project, tmp_path):
    """The header at the head of a state's file (IncState.header) is read alone after a comment edit: one that
    is not a state's (planted, corrupt) makes the state be read, and that one's problem said -- never a
    traceback, never a hit."""
    import pickle

    cache = tmp_path / "cache"
    first = _scan(project, cache)
    (state,) = (cache / "results").glob("*.inc")
    state.write_bytes(pickle.dumps(({}, frozenset({1, 2, 3}))) + b"\x80\x04not a pickle")
    helpers = project / "pkg" / "helpers.py"
    helpers.write_text(helpers.read_text() + "\n# a comment\n")
    _bump_mtime(helpers)
    again = _scan(project, cache)
    assert again.stats["result_cache"] == "miss"
    assert any("corrupt incremental state" in why for _, why in again.problems)
    assert _facts(again) == _facts(first)
