"""Engine behaviour that the corpus does not pin down: safety, libraries on the search path, determinism."""
import os
import textwrap
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compile_lint.engine import ScanOptions, scan


def write(root: Path, files: dict) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root


def test_never_imports_scanned_code(tmp_path):
    marker = tmp_path / "IMPORTED"
    write(tmp_path / "proj", {
        "evil/__init__.py": f"""
            open({str(marker)!r}, "w").write("imported")
            raise RuntimeError("importing this package is a bug in the analyzer")
            """,
        "evil/model.py": """
            import subprocess, torch
            from . import helpers
            class Model(torch.nn.Module):
                def forward(self, x):
                    return x + helpers.version()
            compiled = torch.compile(Model(), fullgraph=True)
            """,
        "evil/helpers.py": f"""
            import subprocess
            open({str(marker)!r}, "w").write("imported")
            def version():
                return len(subprocess.check_output(["nvcc", "--version"]))
            """,
    })
    result = scan(ScanOptions(paths=[tmp_path / "proj"]))
    assert not marker.exists()
    assert [(f.rule, Path(f.path).name, f.line) for f in result.findings] == [("CL101", "helpers.py", 5)]
    assert [fr.qualname for fr in result.findings[0].trace] == ["Model.forward", "version"]


def test_follows_imports_into_a_library_on_the_search_path(tmp_path):
    lib = write(tmp_path / "site", {
        "kernlib/__init__.py": "from .api import rmsnorm\n",
        "kernlib/api.py": """
            import functools
            import pathlib

            @functools.cache
            def _module():
                so = pathlib.Path("/opt/kernlib/norm.so")
                if not so.exists():
                    raise RuntimeError("not built")
                return so

            def rmsnorm(x):
                _module()
                return x
            """,
    })
    proj = write(tmp_path / "proj", {
        "app/model.py": """
            import torch
            from kernlib import rmsnorm

            class Norm(torch.nn.Module):
                def forward(self, x):
                    return rmsnorm(x)

            model = torch.compile(Norm(), fullgraph=True)
            """,
    })
    result = scan(ScanOptions(paths=[proj], search_path=[lib], use_environment=False))
    errors = [f for f in result.findings if f.severity == "error"]
    assert len(errors) == 1
    f = errors[0]
    assert f.rule == "CL102" and f.path == str(lib / "kernlib" / "api.py") and f.line == 8
    assert [fr.qualname for fr in f.trace] == ["Norm.forward", "rmsnorm", "_module"]
    assert [Path(fr.path).name for fr in f.trace] == ["model.py", "api.py", "api.py"]
    assert result.stats["modules_from_search_path"] >= 2
    # regions are looked for only in the scanned paths, never in the library
    assert all(Path(r.path).is_relative_to(proj) for r in result.regions)


def test_without_search_path_the_library_is_external(tmp_path):
    proj = write(tmp_path / "proj", {
        "m.py": """
            import torch
            from kernlib import rmsnorm
            f = torch.compile(lambda x: rmsnorm(x), fullgraph=True)
            """,
    })
    result = scan(ScanOptions(paths=[proj], use_environment=False))
    assert result.findings == []


def test_unparsable_file_does_not_stop_the_scan(tmp_path):
    proj = write(tmp_path / "proj", {
        # both mention torch.compile, so both are parsed while looking for regions
        "bad.py": "import torch\ntorch.compile(def broken(:\n",
        "nul.py": "import torch\nx = torch.compile\0\n",
        "ok.py": """
            import time, torch
            @torch.compile
            def f(x):
                return x + time.time()
            """,
    })
    result = scan(ScanOptions(paths=[proj], use_environment=False))
    assert [(f.rule, f.severity) for f in result.findings] == [("CL106", "warning")]  # torch.compile default: no fullgraph
    assert result.stats["files_skipped"] == 2
    reasons = {Path(p).name: why for p, why in result.problems}
    assert "cannot parse" in reasons["bad.py"] and "nul.py" in reasons


def test_output_is_deterministic_across_hash_seeds(tmp_path):
    import os
    import subprocess
    import sys

    corpus = Path(__file__).parent / "corpus" / "cases"
    outs = set()
    for seed in ("1", "2"):
        proc = subprocess.run([sys.executable, "-m", "compile_lint.cli", "scan", str(corpus), "--no-cache", "-q",
                               "--format", "json"], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONHASHSEED=seed))
        assert proc.returncode == 1, proc.stderr
        outs.add(proc.stdout)
    assert len(outs) == 1


def test_python_option_reads_the_target_interpreters_sys_path(tmp_path):
    import sys

    from compile_lint.engine import ScanError, interpreter_sys_path

    paths = interpreter_sys_path(sys.executable)
    assert any(p.endswith("site-packages") for p in paths)
    proj = write(tmp_path / "proj", {"m.py": "import torch\nf = torch.compile(lambda x: x, fullgraph=True)\n"})
    result = scan(ScanOptions(paths=[proj], python=sys.executable))
    assert result.findings == [] and result.stats["regions"] == 1
    import pytest

    with pytest.raises(ScanError, match="cannot read sys.path"):
        scan(ScanOptions(paths=[proj], python=str(tmp_path / "no-such-python")))


def test_fix_point_is_the_first_function_outside_the_region_package_in_a_checkout(tmp_path):
    """A checkout (not a site-packages): two models compiled by a runner in another directory of the same
    package reach one library hazard.  The fix point is the library's function, so the two regions share one
    finding (before import roots were used, each directory counted as its own package and every region was
    its own fix point: 65,014 findings instead of 2,853 on sglang + flashinfer)."""
    root = write(tmp_path / "checkout", {
        "app/__init__.py": "",
        "app/models/__init__.py": "",
        "app/models/a.py": """
            import torch
            from jitlib.build import load
            class A(torch.nn.Module):
                def forward(self, x):
                    return load()(x)
            """,
        "app/models/b.py": """
            import torch
            from jitlib.build import load
            class B(torch.nn.Module):
                def forward(self, x):
                    return load()(x)
            """,
        "app/runner/__init__.py": "",
        "app/runner/compile.py": """
            import torch
            from app.models.a import A
            from app.models.b import B
            ca = torch.compile(A(), fullgraph=True)
            cb = torch.compile(B(), fullgraph=True)
            """,
        "jitlib/__init__.py": "",
        "jitlib/build.py": """
            import subprocess
            def load():
                subprocess.check_output(["nvcc", "--version"])
                return lambda x: x
            """,
    })
    r = scan(ScanOptions(paths=[root], use_environment=False, use_installed_torch=False))
    errors = [f for f in r.findings if f.rule == "CL101"]
    assert len(errors) == 1, [(f.fix_point, f.region.qualname) for f in errors]
    assert errors[0].fix_point == "load" and errors[0].regions_reaching == 2


def test_compile_wrapper_imported_from_another_candidate_file_makes_a_region(tmp_path):
    """`from .wrap import fast; @fast` where wrap.py binds `fast = torch.compile`: the finder follows the
    import into wrap.py (a candidate: it spells a marker word), and into a file that spells none only if its
    text imports or aliases the name (relay.py), not into one that merely defines it (plain.py)."""
    write(tmp_path / "proj", {
        "pkg/__init__.py": "",
        "pkg/wrap.py": """
            import torch
            fast = torch.compile
            """,
        "pkg/relay.py": "from .wrap import (\n    fast as quick,\n)\nslow = quick\n",  # spells no marker word
        "pkg/plain.py": "def plain(f):\n    return f\n",
        "pkg/model.py": """
            import subprocess
            from .wrap import fast
            from .relay import quick, slow
            from .plain import plain

            @fast  # compiled
            def step(x):
                subprocess.run(["true"])
                return x

            @quick
            def other(x):
                return x

            @slow
            def third(x):
                return x

            @plain
            def not_compiled(x):
                subprocess.run(["true"])
                return x
            """,
    })
    result = scan(ScanOptions(paths=[tmp_path / "proj"], use_environment=False))
    assert [r.qualname for r in result.regions] == ["step", "other", "third"]
    assert [(f.rule, f.line) for f in result.findings] == [("CL101", 9)]
    assert "pkg.plain" not in result.program.modules  # never loaded: its text neither imports nor aliases


def test_a_candidate_whose_search_found_nothing_is_put_aside_and_read_again_when_a_walk_reaches_it(tmp_path):
    """A candidate file's summary is put aside once its region search found nothing (Program.evict): the walk
    of a region found later reads it again (a_helpers.py: searched first, the hazard found all the same, its
    `noqa` kept), and one nothing reads again stays a stub that answers the post-walk steps (unused.py: its
    module-level `os.environ[...] = ...` key is still a key the program sets)."""
    from compile_lint.modulestub import PutAside
    from compile_lint.summary import ModuleSummary

    write(tmp_path / "proj", {
        "pkg/__init__.py": "",
        "pkg/a_helpers.py": """
            # the model is compiled with torch.compile in model.py, not here
            import subprocess

            def version():
                return len(subprocess.check_output(["nvcc", "--version"]))

            def quiet():
                return subprocess.check_output(["true"])  # noqa: CL101
            """,
        "pkg/model.py": """
            import torch
            from . import a_helpers

            class Model(torch.nn.Module):
                def forward(self, x):
                    return x + a_helpers.version() + len(a_helpers.quiet())

            compiled = torch.compile(Model(), fullgraph=True)
            """,
        "pkg/unused.py": """
            # torch.compile is not called here either
            import os
            os.environ["UNUSED_KEY"] = "1"
            """,
        "pkg/b_relay.py": """
            # nor here: torch.compile
            from .c_late import builder
            builder.compile()
            """,
        "pkg/c_late.py": """
            # loaded by b_relay's search, before its own; no torch.compile either
            class _Builder:
                def compile(self):
                    return None
            builder = _Builder()
            """,
    })
    result = scan(ScanOptions(paths=[tmp_path / "proj"], use_environment=False))
    assert [(f.rule, Path(f.path).name, f.line) for f in result.findings] == [("CL101", "a_helpers.py", 6)]
    assert [(f.rule, Path(f.path).name, f.line) for f in result.suppressed] == [("CL101", "a_helpers.py", 9)]
    modules = result.program.modules
    assert type(modules["pkg.a_helpers"]) is ModuleSummary  # read again by the walk
    assert isinstance(modules["pkg.unused"], PutAside)
    assert isinstance(modules["pkg.c_late"], PutAside)  # loaded by another search that found nothing
    assert "UNUSED_KEY" in modules["pkg.unused"].env_keys_set
    assert result.stats["files_parsed"] == 6  # each file once: reading one again is not parsing it anew


def test_mention_index_matches_whole_identifiers_and_base_lists(tmp_path):
    from compile_lint.program.locator import _MentionIndex

    files = []
    for name, text in {"a": "class A(Base, mix.Mixin):\n    pass\nEntryClass = A\n",
                       "b": "EntryClasses = []\nclass B(\n    Base,\n):\n    x = Mixin\n",
                       "c": "# Base\n"}.items():
        (tmp_path / f"{name}.py").write_text(text)
        files.append((name, tmp_path / f"{name}.py", False))
    index = _MentionIndex(files)
    names = lambda hits: [m for m, _, _ in hits]  # noqa: E731
    assert names(index.files_with(b"EntryClass")) == ["a"]  # not b's EntryClasses
    assert names(index.files_with(b"Base")) == ["a", "b", "c"]
    assert names(index.files_with(b"Base", in_bases=True)) == ["a", "b"]  # not c's comment
    assert names(index.files_with(b"Mixin", in_bases=True)) == ["a"]  # b names it in its body only


def test_a_warm_process_keeps_a_search_path_packages_index_until_one_of_its_files_changes(tmp_path, monkeypatch):
    from compile_lint.program import locator

    monkeypatch.setattr(locator, "_PACKAGE_TABLES", None)
    files = [(n, tmp_path / f"{n}.py", False) for n in ("a", "b")]
    files[0][1].write_text("class A(Base):\n    pass\n")
    files[1][1].write_text("class B(Other):\n    pass\n")
    names = lambda index, needle: [m for m, _, _ in index.files_with(needle, in_bases=True)]  # noqa: E731
    first = locator.package_index(files)
    assert names(first, b"Base") == ["a"] and locator.package_index(files).tables is not first.tables  # (cold)
    locator.keep_package_indexes()
    warm = locator.package_index(files)
    assert names(warm, b"Base") == ["a"]
    again = locator.package_index(files)
    assert again.tables is warm.tables  # what the previous scan built, not read again
    again._texts = None  # (answers from the kept tables, or this would read the files)
    assert names(again, b"Base") == ["a"] and names(again, b"Other") == ["b"]
    files[1][1].write_text("class B(Base, Other):\n    pass\n")  # a new size: the package changed
    changed = locator.package_index(files)
    assert changed.tables is not warm.tables and names(changed, b"Base") == ["a", "b"]


def test_a_warm_process_builds_what_a_scan_asked_of_a_packages_index_from_the_state(tmp_path, monkeypatch):
    """What a scan asked of a search-path package's index (the incremental state keeps it: package_index_use)
    is built by a warm process after answering from a result (warm_package_index): the next scan's index
    takes those tables and answers as one built from the files."""
    from compile_lint.program import locator

    monkeypatch.setattr(locator, "_PACKAGE_TABLES", None)
    files = [(n, tmp_path / f"{n}.py", False) for n in ("a", "b")]
    files[0][1].write_text("class A(Base):\n    pass\n\nA()\n")
    files[1][1].write_text("class B(Other):\n    pass\n# hook_me\n")
    scanned = locator.package_index(files)  # (a scan in a process of its own)
    want = (scanned.files_with(b"Base", in_bases=True), scanned.files_with(b"A", called=True),
            scanned.files_with(b"hook_me"))
    use = locator.package_index_use(scanned)
    assert use[1:] == (True, True, (b"hook_me",))
    locator.keep_package_indexes()
    locator.warm_package_index(use)
    warmed = locator.package_index(list(use[0]))
    assert all(t is not None for t in warmed.tables[:2]) and b"hook_me" in warmed.tables[2]
    warmed._texts = None  # (answers from the tables built while nobody waited, or this would read the files)
    assert (warmed.files_with(b"Base", in_bases=True), warmed.files_with(b"A", called=True),
            warmed.files_with(b"hook_me")) == tuple([(m, str(p), k) for m, p, k in got] for got in want)


def test_a_warm_process_keeps_a_search_path_packages_listing_until_one_of_its_directories_changes(tmp_path,
                                                                                                    monkeypatch):
    import os

    from compile_lint import discover
    from compile_lint.program import locator

    monkeypatch.setattr(locator, "_PACKAGE_LISTINGS", None)
    monkeypatch.setattr(locator, "_PACKAGE_TABLES", None)
    pkg = tmp_path / "sp" / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for rel in ("__init__.py", "a.py", "sub/__init__.py", "sub/b.py"):
        (pkg / rel).write_text("")
    # (a directory changed in the last RACY_NS is not kept: a coarse clock may not tell a second change)
    monkeypatch.setattr(discover, "RACY_NS", 0)

    def listing():
        return [(m, p.relative_to(tmp_path).as_posix(), k)
                for m, p, k in locator.ModuleLocator({}, [tmp_path / "sp"]).package_files("pkg")]

    cold = listing()
    assert [m for m, _, _ in cold] == ["pkg", "pkg.a", "pkg.sub", "pkg.sub.b"]
    locator.keep_package_indexes()
    assert listing() == cold and str(pkg) in locator._PACKAGE_LISTINGS
    walk = os.walk
    monkeypatch.setattr(locator.os, "walk", lambda *a, **k: iter(()))  # (answered from what was kept)
    assert listing() == cold
    monkeypatch.setattr(locator.os, "walk", walk)
    (pkg / "sub" / "c.py").write_text("")  # a new entry: the directory's mtime moved
    assert [m for m, _, _ in listing()] == ["pkg", "pkg.a", "pkg.sub", "pkg.sub.b", "pkg.sub.c"]


def test_argument_constants_reach_through_locals_and_closures(tmp_path):
    """Expressions are evaluated with only the bound parameters they read (Program._narrowed): reads through
    a local (`impl = kind`) and through a closure (`def go(): return kind`) must still see the constant."""
    write(tmp_path / "proj", {
        "pkg/__init__.py": "",
        "pkg/model.py": """
            import subprocess
            import torch

            def choose(kind, unused):
                impl = kind
                if impl == "shell":
                    subprocess.run(["nvcc"])  # reached from choose("shell", 3) only
                return unused

            def runner(kind):
                def go():
                    return kind
                return go()

            @torch.compile(fullgraph=True)
            def f(x):
                choose("gpu", 1)
                choose("gpu", 2)
                if runner("gpu") == "shell":
                    subprocess.check_output(["nvcc"])  # dead: runner("gpu") returns "gpu"
                return x

            @torch.compile(fullgraph=True)
            def g(x):
                choose("shell", 3)
                return x
            """,
    })
    result = scan(ScanOptions(paths=[tmp_path / "proj"], use_environment=False))
    assert sorted((f.rule, f.line, f.region.qualname) for f in result.findings) == [("CL101", 8, "g")]


def test_discovery_respects_gitignore_like_ruff(tmp_path):
    """.gitignore files of the tree and of its parents up to the work tree's root are honoured (negations
    too); a path named on the command line is scanned even if ignored; --no-respect-gitignore scans all."""
    from compile_lint.discover import discover

    repo = tmp_path / "repo"
    write(repo, {
        ".gitignore": "generated/\n*_pb2.py\n.venv/\n",
        "pkg/__init__.py": "", "pkg/a.py": "", "pkg/a_pb2.py": "", "pkg/generated/x.py": "",
        "pkg/.gitignore": "scratch_*.py\n!scratch_keep.py\n",
        "pkg/scratch_1.py": "", "pkg/scratch_keep.py": "",
        ".venv/lib/site-packages/lib/__init__.py": "",
    })
    (repo / ".git").mkdir()

    def names(target, **kw):
        return sorted(f.module for f in discover([target], **kw).files)

    assert names(repo / "pkg") == ["pkg", "pkg.a", "pkg.scratch_keep"]
    assert names(repo) == ["pkg", "pkg.a", "pkg.scratch_keep"]
    assert names(repo / ".venv" / "lib" / "site-packages") == ["lib"]  # named: scanned although ignored
    assert len(names(repo / "pkg", respect_gitignore=False)) == 6


def test_a_warm_process_answers_discovery_from_its_previous_walk_until_the_tree_changes(tmp_path, monkeypatch):
    """The daemon keeps the previous walk of the same paths (discover.keep_discoveries): answered without
    listing a directory while none changed; a file added or removed, a .gitignore edited in place, an
    __init__.py above the scanned path or another exclude pattern walk again, each answer as a cold walk's;
    other entries of the directories above (a file in /tmp, git's index) do not.
    A walk that met a symlink, or a directory changed within RACY_NS of the walk, is not kept."""
    import time

    from compile_lint import discover as disc_mod

    monkeypatch.setattr(disc_mod, "_KEPT", None)
    monkeypatch.setattr(disc_mod, "RACY_NS", 0)  # (a tree made a moment ago; the guard has its own case below)
    repo = tmp_path / "repo"
    write(repo, {".gitignore": "gen/\n", "pkg/__init__.py": "", "pkg/a.py": "", "pkg/sub/b.py": "",
                 "pkg/gen/x.py": ""})
    (repo / ".git").mkdir()
    listings = []
    real_scandir = os.scandir
    monkeypatch.setattr(disc_mod.os, "scandir", lambda d: (listings.append(str(d)), real_scandir(d))[1])

    def walk(target=repo / "pkg", exclude=()):
        listings.clear()
        time.sleep(0.02)  # (a change after the previous walk has a later timestamp than it on any clock tick)
        got = disc_mod.discover([target], exclude=lambda p: any(e in p.parts for e in exclude),
                                exclude_key=tuple(exclude))
        listed = len(listings)
        cold = disc_mod._discover([Path(target).absolute()], lambda p: any(e in p.parts for e in exclude), (),
                                  True, None, [])
        assert (got.files, got.import_roots, got.problems) == (cold.files, cold.import_roots, cold.problems)
        return sorted(f.module for f in got.files), listed

    assert walk() == (["pkg", "pkg.a", "pkg.sub.b"], 2)  # cold: not kept yet (keep_discoveries not called)
    disc_mod.keep_discoveries()
    assert walk() == (["pkg", "pkg.a", "pkg.sub.b"], 2)  # (pkg/ and pkg/sub/ listed; gen/ ignored)
    assert walk() == (["pkg", "pkg.a", "pkg.sub.b"], 0)  # answered from the kept walk
    (repo / "pkg" / "a.py").write_text("x = 1\n")  # an edit in place: no directory changes
    assert walk()[1] == 0
    (repo / "pkg" / "sub" / "c.py").write_text("")
    assert walk() == (["pkg", "pkg.a", "pkg.sub.b", "pkg.sub.c"], 2)
    (repo / "pkg" / "sub" / "b.py").unlink()
    assert walk() == (["pkg", "pkg.a", "pkg.sub.c"], 2)
    assert walk()[1] == 0
    (tmp_path / "elsewhere.txt").write_text("")  # an ancestor changes, as /tmp or a home directory does all day
    (repo / ".git" / "index").write_text("")  # git writes in .git
    assert walk()[1] == 0
    (repo / ".gitignore").write_text("gen/\nsub/\n")  # edited in place, above the scanned path
    assert walk() == (["pkg", "pkg.a"], 1)
    assert walk(exclude=("sub",)) == (["pkg", "pkg.a"], 1)  # another exclude pattern: its own walk
    (repo / "__init__.py").write_text("")  # the scanned path's import root moves up: modules renamed
    assert walk() == (["repo.pkg", "repo.pkg.a"], 1)
    os.symlink(repo / "pkg" / "sub", repo / "pkg" / "link")
    assert walk()[1] == 2 and walk()[1] == 2  # a walk that met a symlink is not kept
    (repo / "pkg" / "link").unlink()
    monkeypatch.setattr(disc_mod, "RACY_NS", 3600 * 10**9)  # every directory changed "a moment ago"
    assert walk()[1] == 1 and walk()[1] == 1


_TEXTS = ["class A(Base, mix.Mixin):\n    pass\n", "x = Base()\n", "class B(\n    Base,\n):\n    y = Mixin\n",
          "# Base\nEntryClass = A\n", "class C(A): pass\nC(1)\n", "", "Mixin(Base)\n"]
_NEEDLES = [b"Base", b"Mixin", b"A", b"B", b"C", b"EntryClass", b"mix"]


@given(st.lists(st.sampled_from(range(len(_TEXTS))), min_size=1, max_size=5),
       st.dictionaries(st.integers(0, 4), st.sampled_from(range(len(_TEXTS))), max_size=3),
       st.lists(st.sampled_from(_NEEDLES), max_size=4))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_mention_index_restored_after_edits_answers_as_one_built_again(tmp_path, before, edits, asked):
    """An incremental scan takes the previous scan's index over (_MentionIndex.restore), the edited files'
    entries worked out from their new text: every query answers as an index built from the files again."""
    from compile_lint.program.locator import _MentionIndex

    d = tmp_path / str(abs(hash((tuple(before), tuple(edits.items()), tuple(asked)))))
    d.mkdir()
    files = [(f"m{i}", d / f"m{i}.py", False) for i in range(len(before))]
    for (_, path, _), t in zip(files, before):
        path.write_text(_TEXTS[t])
    old = _MentionIndex(files)
    for needle in asked:  # what the previous scan built: some indexes, some whole-text queries
        for kind in ((False, False), (True, False), (False, True)):
            old.files_with(needle, *kind)
    texts = {}
    for i, t in edits.items():
        if i < len(files):
            files[i][1].write_text(_TEXTS[t])
            texts[str(files[i][1])] = _TEXTS[t].encode()
    restored, fresh = _MentionIndex(files), _MentionIndex(files)
    restored.restore(old.parts(), texts)
    restored._texts = None  # answers come from what was restored, or the test would pass reading the files
    for needle in asked:
        for kind in ((False, False), (True, False), (False, True)):
            assert restored.files_with(needle, *kind) == fresh.files_with(needle, *kind)
