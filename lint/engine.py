"""The pipeline, end to end: discover -> index -> program -> regions -> reach -> findings.

``scan(ScanOptions)`` is what the CLI, the tests and the benchmarks call.  It never imports or executes the
code it scans; the only process it may start is the *target interpreter* (to read its ``sys.path`` and its
torch's trace rules), never the scanned code.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from pathlib import Path
from typing import Callable, Optional

from . import memtrim, postwalk
from .cache import SummaryCache
from .discover import discover
from .firsthazard import breaks, first_hazard
from .incstate import PendingState
from .loader import SummaryLoader
from .parallel import default_jobs, prefetch
from .postwalk import MergedFindings, keeps_merges
from .program import ModuleLocator, Program
from .program.facts import UserFacts
from .publicapi import public_api
from .reach import Reach
from .reach_replay import KeptFirst
from .regions import FRAMEWORK_MODELS, Region, RegionFinder
from .tracking import ContextsMoved

# Files that cannot hold a region are not parsed unless the walk reaches them.
REGION_MARKERS = (b"compile", b"_dynamo", b"optimize")


class ScanError(Exception):
    """Bad input: reported as one clear line, exit code 2."""


@dataclass
class ScanOptions:
    paths: list
    search_path: list = field(default_factory=list)  # extra roots (--search-path)
    python: Optional[str] = None  # target interpreter whose sys.path is followed (default: this one)
    use_environment: bool = True  # follow imports into the interpreter's sys.path
    entries: list = field(default_factory=list)  # "module:qualname"
    select: list = field(default_factory=list)
    ignore: list = field(default_factory=list)
    cache_dir: Optional[Path] = None  # None: no cache
    # where what depends only on the environment is cached (trace rules, summaries of files outside the scanned
    # paths): the user cache (lint/cachedirs.py); None: in cache_dir too
    shared_cache_dir: Optional[Path] = None
    exclude: list = field(default_factory=list)
    respect_gitignore: bool = True  # discovery skips what .gitignore files ignore (lint/gitignore.py)
    framework_models: tuple = FRAMEWORK_MODELS
    region_markers: tuple = REGION_MARKERS
    use_installed_torch: bool = True
    models: list = field(default_factory=list)  # restrict framework model registries (--model)
    public_api: list = field(default_factory=list)  # library mode: every public function is a region
    target_arch: Optional[str] = None
    cuda_version: Optional[str] = None
    progress: Optional[Callable] = None  # progress(event: str, **info)
    # ecosystem (lint/config.py, lint/suppressions.py): [(base dir, glob, codes)] from per-file-ignores,
    # and whether to report suppression comments that matched nothing (CL302)
    per_file_ignores: list = field(default_factory=list)
    report_unused_suppressions: bool = True
    jobs: Optional[int] = None  # processes that index files before the walk (--jobs; None: one per core)
    # answer from the result cache when nothing the last identical scan read has changed (lint/resultcache.py);
    # off by default: a cached result has no `program` (the fixers and `graph` need one)
    use_result_cache: bool = False
    # with the result cache: after an edit, walk again only the regions whose reads changed (lint/incremental.py).
    # Opt-in (`--incremental`) until its memory and state size are measured on a whole site-packages: tracking
    # raised a cold scan's peak memory from about 1.4 to 2.3 GB on sglang + flashinfer (2026-12-02)
    incremental: bool = False
    # keep every path the walk found to each hazard (result.paths_by_hazard), not only the reported shortest one
    keep_paths_by_hazard: bool = False
    # the user's facts (lint/program/facts.py): --assume EXPR=VALUE as Assumptions, --env as (name, value),
    # and whether the listed variables are the deployment's whole environment (--env-complete)
    assume: list = field(default_factory=list)
    env: list = field(default_factory=list)
    env_complete: bool = False
    not_installed: list = field(default_factory=list)  # modules the deployment does not have (--not-installed)
    # the deployment's torch (--torch-version): whose measured verdict table the rules read; None: the
    # installed torch's (the GPU machine runs 2.11 where this one has 2.13: the verdicts differ)
    torch_version: Optional[str] = None
    # also walk into torch.compiler.disable'd callees and report what lies there as notes (--show-disabled):
    # what removing the disable would expose; by default the walk stops at the disabled call (CL116)
    show_disabled: bool = False


@dataclass
class ScanResult:
    findings: list
    regions: list
    stats: dict
    problems: list  # (path, message)
    trace_rules_source: str
    roots: list
    program: Optional[Program] = None
    suppressed: list = field(default_factory=list)
    paths_by_hazard: Optional[dict] = None  # (rule, path, line) -> every walk finding (keep_paths_by_hazard)
    # (rule, path, line) -> the files its kept paths pass through, where a warm process's merge gave them
    # (postwalk.MergedFindings.hazard_files; postscan.touching works them out otherwise)
    files_by_hazard: Optional[dict] = None
    coverage: Optional[object] = None  # lint/coverage.py: Coverage (what was analysed, what could not be)
    scanned_files: frozenset = frozenset()  # str(path) of every discovered file: the user's code
    # the JSON report's texts of ``findings``, kept with a result cache entry: (roots key, findings, texts)
    # (report.texts_of; a hit in a process of its own writes them, not encodes them again)
    json_texts: Optional[tuple] = None


def interpreter_sys_path(python: str) -> list:
    """The target interpreter's sys.path, read by running it with ``-c`` (it imports nothing of ours)."""
    try:
        out = subprocess.run(
            [python, "-I", "-c", "import sys, json; print(json.dumps(sys.path))"],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout
        return [p for p in json.loads(out) if p]
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        raise ScanError(f"cannot read sys.path from interpreter {python!r}: {e}") from None


def _begin_trace_rules(options: ScanOptions):
    """Dynamo's trace rules begun (dynamo/trace_rules.py): where they are not cached, the interpreter dumps
    them in a process of its own (it imports torch: some 4 s) while the scan finds and reads its files."""
    from .dynamo.trace_rules import begin_trace_rules

    cache_dir = None if options.cache_dir is None else (options.shared_cache_dir or options.cache_dir)
    return begin_trace_rules(python=options.python, cache_dir=cache_dir, use_installed=options.use_installed_torch)


def scan(options: ScanOptions) -> ScanResult:
    """Run the pipeline.  The cyclic GC is paused meanwhile: a scan builds millions of small containers that
    live until it ends (summaries, memo tables), and the collections they triggered walked them again and
    again (279 s instead of 110 s for a warm sglang+flashinfer scan, and a higher peak RSS); a scan makes no
    reference cycle worth collecting."""
    from .cache import _no_gc

    with _no_gc(), memtrim.trimming():  # (the freed memory given back as the scan goes: lint/memtrim.py)
        return _scan(options)


# tries of an incremental scan that met context caps whose first contexts moved (ContextsMoved) before a full scan
MAX_REPLANS = 2
# a plan made again after ContextsMoved that leaves more than this share of the previous scan's top units (file
# searches and region walks) stale, and more than this many, is not tried: a full scan instead.  Measured on the
# bench site (session 27): a leaf edit whose replan left 569 of 3,308 top units stale walked 108 s (a cold scan:
# 151 s), met more moved caps and scanned in full after all (277 s in all).  A small project's replan is cheap
REPLAN_MAX_STALE_TOPS = 0.1
REPLAN_MIN_STALE_TOPS = 50


def _scan(options: ScanOptions) -> ScanResult:
    pending_rules = _begin_trace_rules(options)
    try:
        return _scan_with(options, pending_rules)
    finally:
        pending_rules.close()  # (a dump nobody read: the scan ended before it needed the rules)


def _scan_with(options: ScanOptions, pending_rules) -> ScanResult:
    progress = options.progress or (lambda *a, **k: None)
    paths = [Path(p) for p in options.paths]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise ScanError(f"path does not exist: {missing[0]}")
    bad_sp = [str(s) for s in options.search_path if not Path(s).is_dir()]
    if bad_sp:
        raise ScanError(f"--search-path is not a directory: {bad_sp[0]}")
    excl = [str(Path(e)) for e in options.exclude]
    # explicit --search-path roots name namespace packages right (a scanned file under one of them gets its
    # module name from that root); the interpreter's sys.path is not used for this (the test dir, cwd...)
    disc = discover(paths, exclude=(lambda p: any(part in excl for part in p.parts) or any(
        str(p).startswith(e) for e in excl)) if excl else (lambda p: False),
        known_roots=[Path(s).absolute() for s in options.search_path],
        respect_gitignore=options.respect_gitignore, exclude_key=tuple(excl))
    # --- which files to parse (compile-lint performance; see README "Performance") ---
    # Packages Dynamo classifies by its trace rules (torch, triton, numpy...) are not scanned even when they lie
    # under a scanned site-packages: their calls are classified by name, never walked, so a `torch.compile`
    # inside torch/_inductor is no user region, and indexing torch (2,300 files) would only cost time -- and
    # would make `torch.compile` resolve to torch/__init__.py's function instead of the known external.
    from .dynamo.model import OPAQUE_PACKAGES

    opaque_files = [f for f in disc.files if f.module.split(".")[0] in OPAQUE_PACKAGES]
    if opaque_files:
        disc.files = [f for f in disc.files if f.module.split(".")[0] not in OPAQUE_PACKAGES]
    scanned = {f.module: (f.path, f.is_package) for f in disc.files}

    search_path = [str(r) for r in disc.import_roots] + [str(Path(s).absolute()) for s in options.search_path]
    if options.use_environment:
        env_path = interpreter_sys_path(options.python) if options.python else list(sys.path)
        search_path += [p for p in env_path if p and Path(p).is_dir()]
    locator = ModuleLocator(scanned, search_path)
    cache = SummaryCache(options.cache_dir, options.shared_cache_dir, [p.absolute() for p in paths])
    if options.cache_dir is not None:
        from .cachedirs import ensure_gitignore

        ensure_gitignore(options.cache_dir)  # a cache at a project's root never shows in `git status`
    loader = SummaryLoader(cache)

    arch = None
    if options.target_arch:
        from .arch import ArchError, ArchFacts

        try:
            arch = ArchFacts.parse(options.target_arch, options.cuda_version)
        except ArchError as e:
            raise ScanError(str(e)) from None
    elif options.cuda_version:  # checked even without --target-arch: a typo is one clear line, not ignored
        from .arch import ArchError, ArchFacts

        try:
            ArchFacts.parse("sm90", options.cuda_version)
        except ArchError as e:
            raise ScanError(str(e)) from None
    torch_version_note = ""
    if options.torch_version:
        from .dynamo.verdicts import load_verdicts, version_key

        table = load_verdicts(options.torch_version) if version_key(options.torch_version) else None
        if table is None:
            raise ScanError(f"--torch-version {options.torch_version}: expected a version like 2.11 or 2.13.0")
        torch_version_note = f"; for --torch-version {options.torch_version}: {table.source}"

    def read_rules() -> tuple:
        """(the trace rules, where they come from): waits for their dump if it is still under way."""
        rules = pending_rules.result()
        return rules, rules.source + torch_version_note
    all_paths = frozenset(str(f.path) for f in disc.files + opaque_files)
    wrapper_names = tuple(m.callee.rsplit(".", 1)[-1].encode() for m in options.framework_models)
    markers = tuple(options.region_markers) + wrapper_names
    likely_region_file = _likely_region_file(options, wrapper_names)
    results = None
    full_because = ""
    inc = None  # lint/incremental.py: what this scan reads, per region; the previous scan's regions to reuse
    facts = UserFacts(tuple(options.assume), tuple(options.env), options.env_complete, tuple(options.not_installed))
    if options.use_result_cache and cache.root is not None:
        from .incremental import Incremental
        from .resultcache import NO_RESULT, ResultCache, holds_no_result

        if not pending_rules.ready and holds_no_result(cache):
            # nothing to answer from, whatever the options' key (which holds the rules): the rules' dump goes
            # on while the files are found and the pool indexes them, and the entry is keyed once they are read
            results = ResultCache(cache, None)
            results.miss = NO_RESULT
        else:
            trace_rules, tr_source = read_rules()
            results = ResultCache(cache, _options_key(options, search_path, trace_rules))
            cached = results.load(all_paths, incremental=options.incremental and not facts, candidacy=lambda data: (
                any(mk in data for mk in markers), any(mk in data for mk in markers) and likely_region_file(data)))
            if cached is not None:
                cached.stats.update(files_parsed=results.reindexed, cache_hits=cache.hits, result_cache="hit")
                cached.trace_rules_source = tr_source  # the same rules; only how they were read may differ
                return cached
        if options.incremental and not facts:  # the facts' use counts (the header) are per scan: not tracked
            inc = Incremental(*results.incremental) if results.incremental else Incremental()
        full_because = results.miss if not results.incremental else ""  # (--stats: why a scan was a full one)
    from .keptstates import retire

    def new_program() -> Program:
        program = Program(locator, loader, arch=arch, scanned_modules=scanned.keys(), facts=facts or None)
        retire(program)  # (a warm process frees it after answering)
        return program

    program = new_program()

    # Regions are looked for in the scanned files only, and only in files that can hold one.
    likely, others = [], []
    # an incremental scan reads again only the edited files: the others are candidates as they were
    was = dict(inc.old.candidates) if inc is not None and inc.old is not None else None
    edited = {p for p in inc.plan.texts} if was is not None else ()
    for f in disc.files:
        if was is not None and str(f.path) not in edited:
            if f.module in was:
                (likely if was[f.module] else others).append(f)
            continue
        try:
            with open(f.path, "rb") as fh:
                data = fh.read()
        except OSError as e:
            disc.problems.append((str(f.path), f"cannot read: {e.strerror or e}"))
            continue
        if any(mk in data for mk in markers):
            (likely if likely_region_file(data) else others).append(f)
    # The likely region files first: their walks keep this process busy while the pool indexes the other
    # candidates (which only the region search needs, and quickly), instead of waiting for the pool at first.
    candidates = likely + others
    finder = RegionFinder(program, options.framework_models, tuple(options.models),
                          candidates=frozenset(f.module for f in candidates))
    cand_key = tuple((f.module, i < len(likely)) for i, f in enumerate(candidates))
    if inc is not None and inc.old is not None and inc.old.candidates != cand_key:
        from .incremental import Incremental

        inc = Incremental()  # a file became (or stopped being) a candidate: the order of the scan changed
        full_because = "a file became or stopped being a region candidate (the order of the scan changed)"
    # the candidates, and what the likely region files import, are parsed on --jobs processes
    # (lint/parallel.py), in the background while this process finds the regions and walks them; an
    # incremental scan reads the few summaries it needs from the cache
    reusing = inc is not None and inc.old is not None
    likely_modules = {f.module for f in likely}  # (each candidate's text was read and told apart above)
    loader.ahead = prefetch([] if reusing else [(f.module, f.path, f.is_package) for f in candidates], locator,
                            cache, options.jobs or default_jobs(), progress=progress,
                            follow=lambda module, data: module in likely_modules)
    # --- end of: which files to parse ---
    replans = 0
    try:
        trace_rules, tr_source = read_rules()  # (the walks need them; the pool indexes meanwhile)
        if results is not None and results.path is None:
            results.set_key(_options_key(options, search_path, trace_rules))
        while True:
            try:
                regions, merged, first_hazards, reach = _find_and_walk(
                    options, program, finder, candidates, search_path, trace_rules, progress,
                    parsed=lambda: loader.parsed + loader.ahead.indexed, inc=inc)
                if inc is not None:
                    inc.settle()
                break
            except ContextsMoved as e:
                moved = e.first
            # the edit moved which contexts of some functions come first (lint/tracking.py): planned again from
            # their first contexts in that try's order, with every unit that met a context whose precision
            # those change stale, in a fresh program; a second time, a full scan
            replans += 1
            old = inc.old if replans < MAX_REPLANS else None
            if old is None and inc.old is not None:
                full_because = (f"each plan of the edit moved which contexts of some functions come first "
                                f"({replans} plans; lint/tracking.py)")
            plan = inc.plan.reseeding(old, moved) if old is not None else None
            if plan is not None:
                stale_tops = sum(1 for u in plan.stale if u in old.tops)
                if stale_tops > max(REPLAN_MIN_STALE_TOPS, REPLAN_MAX_STALE_TOPS * len(old.tops)):
                    full_because = (f"the edit moved which contexts of {len(moved)} functions come first; planned "
                                    f"again, {stale_tops} of {len(old.tops)} file searches and region walks "
                                    f"would run again (lint/tracking.py)")
                    old = plan = None
            inc = Incremental(old, plan)
            program = finder = None
            import gc

            gc.collect()  # (paused during a scan: the try before is garbage with cycles)
            program = new_program()
            finder = RegionFinder(program, options.framework_models, tuple(options.models),
                                  candidates=frozenset(f.module for f in candidates))
    except BaseException:
        loader.ahead.close()  # an error or an interrupt: no worker left behind
        raise
    loader.parsed += loader.ahead.finish()  # every file of the set, used or not: counts do not depend on timing
    reusing = inc is not None and inc.old is not None  # (a second replan scanned in full)
    retire((reach, inc))
    inc_state = None
    if inc is not None:
        inc.t.detach()  # the walks' end: the post-walk steps below add nothing to the state
        if not reusing:  # a full scan's state is built after the answer (its 25 s on the bench site)
            inc_state = PendingState(partial(inc.state, cand_key, dict(program.modules)))
        else:  # (its stand-ins below need it; an edit's is built in a second or two)
            inc_state = inc.state(cand_key, program.modules)
            # what the post-walk steps read of the program (keys the program sets, suppressions, the
            # coverage's imports) is every module the scan loaded: the reused regions' ones too, as stand-ins
            # that read their summary only if a step needs more (modulestub.ModuleStub)
            inc.stand_in(program, inc_state, lambda name, path, pkg: loader(name, Path(path), pkg))
    findings = postwalk.drop_set_env_keys(merged.findings(), program)
    if inc_state is not None:
        inc_state.merged_per_key = not options.keep_paths_by_hazard
        inc_state.keep_merge(merged.memo())
    findings = postwalk.add_cache_notes(findings, program)
    postwalk.attach_fix_candidates(findings)
    findings, suppressed = postwalk.select_and_suppress(findings, options, program)

    from . import coverage
    from .dynamo.model import OPAQUE_PACKAGES as _opaque

    scanned_files = frozenset(str(f.path) for f in disc.files)
    cov = coverage.compute(regions, finder.unresolved, program, locator, search_path,
                           options.python or sys.executable, scanned_files, reach.stats, _opaque)
    # regions without a function to walk are in the coverage, with their reason; library mode's table is
    # keyed by region index
    kept = [i for i, r in enumerate(regions) if r.entries]
    first_hazards = {new: first_hazards[old] for new, old in enumerate(kept) if old in first_hazards}
    regions = [regions[i] for i in kept]
    problems = list(disc.problems) + loader.problems + cache.problems + list(program.stats.parse_errors)
    stats = {
        "files_discovered": len(disc.files),
        "files_parsed": loader.parsed,
        "cache_hits": cache.hits,
        "modules_indexed": program.stats.modules_indexed,
        "modules_from_search_path": program.stats.modules_from_search_path,
        "files_skipped": len(program.stats.parse_errors),
        "files_opaque": len(opaque_files),  # under torch/, triton/...: classified by trace rules, not scanned
        "regions": len(regions),
        "regions_unresolved": len(cov.unresolved),
        "functions_walked": reach.stats.functions_walked,  # (an incremental scan: the sum of every region's)
        "call_sites": reach.stats.call_sites,
        "unresolved_calls": reach.stats.unresolved_calls,
        "unresolved_ratio": round(reach.stats.unresolved_calls / reach.stats.call_sites, 4)
        if reach.stats.call_sites else 0.0,
        "findings": len(findings),
        # by certainty: met on every trace of the region, or only under branches the walk could not decide
        "findings_certain": sum(1 for f in findings if not f.conditions),
        "findings_conditional": sum(1 for f in findings if f.conditions),
        "suppressed": len(suppressed),
        # the resolver's cycles through calls, globals and classes worked out again to their fixpoint, and those
        # whose value still grew after program/fixpoint.py's MAX_ROUNDS (kept as the last round left them: which
        # member was asked first may still change them)
        "cycle_rounds": program.stats.fixpoint_rounds,
        "cycles_unsettled": program.stats.fixpoint_unsettled,
    }
    if facts:  # what each of the user's facts decided: an assumption that matched nothing is a typo to see
        stats["facts"] = facts.header_lines()
    result = ScanResult(findings, regions, stats, problems, tr_source, [str(r) for r in disc.import_roots],
                        program, suppressed, coverage=cov, scanned_files=scanned_files)
    result.unresolved_samples = reach.stats.unresolved_samples
    result.first_hazard = {i: f for i, (f, _) in first_hazards.items()}
    result.unsafe_always = {i for i, (_, always) in first_hazards.items() if always}
    result.paths_by_hazard = merged.paths_by_hazard
    result.files_by_hazard = merged.hazard_files()
    if inc is not None and inc.old is not None:
        result.stats["result_cache"] = "incremental"
        result.stats["incremental"] = {"regions_walked": inc.walked, "regions_reused": inc.reused,
                                       "regions_replayed": inc.replayed,
                                       "files_reindexed": results.reindexed,
                                       "units_stale": len(inc.plan.stale),
                                       # context caps whose order the edit may have moved (lint/tracking.py),
                                       # and how many times the scan met one it had not planned for
                                       "contexts_reseeded": len(inc.plan.reseeded), "replans": replans,
                                       # of the nodes the regions walked again met: steps taken / worked out
                                       "nodes_reused": inc.steps_reused, "nodes_walked": inc.steps_walked,
                                       # replays that took the findings of the hazards the edit did not touch
                                       # from the previous walk, the visits whose reports they took so, and
                                       # those that reported every hazard after all (a path above moved)
                                       "replays_keeping": reach.replays_keeping,
                                       "visits_kept": reach.replay_visits_kept,
                                       "replays_relinked": reach.replays_relinked,
                                       "replays_indexed": reach.replays_indexed}
    elif results is not None:
        result.stats["result_cache"] = "miss"
        if full_because:
            result.stats["result_cache_miss"] = full_because
    if results is not None:
        _store_result(results, result, all_paths, disc, scanned, program, search_path, options, inc_state)
        problems += results.problems
    return result


def _likely_region_file(options: ScanOptions, wrapper_names: tuple) -> Callable[[bytes], bool]:
    """Does a candidate's text spell a compile entry point (``torch.compile``, ``torch._dynamo``, a framework
    wrapper, ``model.compile()``, a configured marker), not only the word (``re.compile``, ``compiled``)?
    A guess that orders the background indexing (parallel.prefetch): 236 of the 2,876 candidates of the
    benchmark's site-packages hold regions, and this picks 457 files holding 234 of them.  The regions found
    do not depend on it."""
    words = [b"torch.compile", b"torch._dynamo", *wrapper_names]  # (``torch.compiler`` holds the first)
    words += [m for m in options.region_markers if m not in REGION_MARKERS]
    # substring tests first, then one pattern at a time, each beginning with a literal that the regex engine
    # looks for at C speed: one alternation of both (`\bimport[ \t]+compile\b|\.compile\([ \t]*\)`) tried
    # every position of every file (1.2 s of the bench site's start, on its 2,194 candidates that spell
    # `compile` but none of the words)
    return lambda data: any(w in data for w in words) or (b"compile" in data and _spells_compile(data))


_COMPILE_CALLED = re.compile(rb"\.compile\([ \t]*\)")  # `model.compile()`
_COMPILE_IMPORTED = re.compile(rb"import[ \t]+compile\b")  # `from torch import compile`


def _spells_compile(data: bytes) -> bool:
    """``model.compile()``, or ``import compile`` with no identifier character before ``import`` (the word
    boundary a regex would test there)."""
    if b".compile(" in data and _COMPILE_CALLED.search(data) is not None:
        return True
    for m in _COMPILE_IMPORTED.finditer(data):
        before = data[m.start() - 1:m.start()] if m.start() else b""
        if not (before.isalnum() or before == b"_"):
            return True
    return False


def _find_and_walk(options: ScanOptions, program: Program, finder: RegionFinder, candidates: list,
                   search_path: list, trace_rules, progress, parsed: Callable[[], int] = lambda: 0,
                   inc=None) -> tuple:
    """Find the regions of each candidate file and walk them at once, then those of the configured public APIs
    and entry points.

    Walking a file's regions as soon as they are found, rather than after every region of every file, lets the
    walk begin while the pool is still indexing (lint/parallel.py): the files it needs are asked for a few at a
    time instead of all at the end of the region search, so the two cores stay busy together.  The order of
    the work is still fixed (the candidates' order), so the results are the same in every run."""
    regions: list = []
    reach = Reach(program, trace_rules, import_roots=search_path, torch_version=options.torch_version,
                  show_disabled=options.show_disabled)
    reach.replay_by_key = not options.keep_paths_by_hazard  # (walk_one merges each region's findings per key)
    # (a warm process folds only what changed since the previous scan's merge: postwalk.MergedFindings; a plan
    # made again after the contexts moved folds in full)
    merged = MergedFindings(options.keep_paths_by_hazard, remember=keeps_merges(),
                            previous=inc.old.take_merge() if inc is not None and inc.old is not None else None)
    # region index -> (the hazard Dynamo meets first, whether one is met on every call): library mode's table
    first_hazard_of: dict = {}

    if inc is not None:
        inc.install(program, reach, finder)
    walked = [0]  # functions walked: the sum of every region's (reused ones included)

    def walk_one(r: Region) -> tuple:
        """(the region's findings, each hazard once with its best path unless every path is kept; for a public
        API, the hazard shown first and whether it is an error; how many functions the walk visited)."""
        before = reach.stats.functions_walked
        # (a public API's findings are read in walk order, first_hazard; the others by hazard site: merged, or
        # the pre-commit hook's with every path)
        hazards = reach.walk(r, by_site=r.kind != "public-api")
        if r.kind != "public-api":
            f = None  # the hazard shown first is library mode's (library.verdicts: the public APIs' rows only)
        elif len(breaks(hazards)) > 1:
            # library mode shows the hazard Dynamo meets first on the call users make (lint/firsthazard.py):
            # against the H200, FlashInfer 0.7.2's shown hazard is Dynamo's stop for 46 of 56 failing APIs
            # (40 without the default call and the order of two calls on one line)
            f = first_hazard(hazards, reach.walk(r, default_call=True))
        else:
            f = first_hazard(hazards)
        # the verdict is the general walk's: unsafe on every call where an error is (the hazard shown may be
        # behind a branch when every branch meets one before it: met_first)
        first = None if f is None else (f, any(h.severity == "error" for h in hazards))
        # (a replay's findings kept from the previous walk come first, merged already, at other sites than the
        # rest: reach_replay.KeptFirst; a plain list goes in the state, which a restricted unpickler reads)
        kept = getattr(hazards, "kept", 0)
        if not options.keep_paths_by_hazard:
            own = MergedFindings()
            own.add(hazards[kept:] if kept else hazards)  # what merging keeps of this region, whatever the others
            hazards = hazards[:kept] + list(own.best.values()) if kept else list(own.best.values())
        elif isinstance(hazards, KeptFirst):
            hazards = list(hazards)
        return hazards, first, reach.stats.functions_walked - before

    def walk(found: list, key: str) -> None:
        for r in found:
            i = len(regions)
            regions.append(r)
            hazards, first, n = inc.walk(key, r, lambda: walk_one(r)) if inc is not None else walk_one(r)
            walked[0] += n
            if first is not None:
                first_hazard_of[i] = first
            merged.add(hazards)
            memtrim.maybe()

    def find(key: str, do_find) -> list:
        return inc.find(key, do_find, finder.unresolved) if inc is not None else do_find()

    progress("scan", done=0, total=len(candidates))
    # A candidate whose search found nothing has its summary put aside (Program.evict) if this search or
    # another that found nothing loaded it: on the benchmark site the 2,200 candidates searched after the last
    # region was walked held some 500 MB of summaries nobody read again
    searched_only: set = set()  # modules first loaded by a region search that found nothing
    for i, f in enumerate(candidates):
        loaded = f.module in program.modules
        before = len(program.modules)
        found = find(f.module, lambda: finder.find(f.module))
        walk(found, f.module)
        if not found:
            searched_only.update(islice(reversed(program.modules), len(program.modules) - before))
            if not loaded or f.module in searched_only:
                program.evict(f.module)
        memtrim.maybe()
        progress("scan", done=i + 1, total=len(candidates), parsed=parsed(), regions=len(regions),
                 findings=merged.count)
    for package in options.public_api:
        found = find(f"public:{package}", lambda: public_api(program, package))
        if not found and program.module(package) is None:
            raise ScanError(f"--public-api {package}: no such package in the scanned paths or on the search path")
        walk(found, f"public:{package}")
    for spec in options.entries:
        found = find(f"entry:{spec}", lambda: [r for r in [finder.entry_point(spec)] if r is not None])
        if not found:
            raise ScanError(f"entry point not found: {spec} (expected module:qualname in the scanned code or on the "
                            f"search path)")
        walk(found, f"entry:{spec}")
    reach.stats.functions_walked = walked[0]
    return regions, merged, first_hazard_of, reach


def _options_key(options: ScanOptions, search_path: list, trace_rules) -> str:
    """Everything besides the files that decides a scan's result (lint/resultcache.py).  The trace rules
    count by content, not by how they were read (dumped now, or from their own cache)."""
    from .resultcache import options_key

    rules = () if trace_rules is None else (
        trace_rules.torch_version, trace_rules.python_version, trace_rules.builtin_skiplist,
        trace_rules.thirdparty_skiplist, trace_rules.mod_inlinelist, trace_rules.legacy_mod_inlinelist,
        trace_rules.mod_skiplist, trace_rules.force_skip_files, tuple(sorted(trace_rules.in_graph_functions)),
        tuple(sorted(trace_rules.skip_functions)))
    return options_key((
        tuple(str(Path(p).absolute()) for p in options.paths), tuple(search_path), options.python,
        options.use_environment, tuple(options.entries), tuple(options.select), tuple(options.ignore),
        tuple(options.exclude), options.respect_gitignore, repr(options.framework_models), tuple(options.region_markers),
        options.use_installed_torch, tuple(options.models), tuple(options.public_api), options.target_arch,
        options.cuda_version, repr(options.per_file_ignores), options.report_unused_suppressions, rules,
        tuple((a.expr, a.raw, repr(a.value)) for a in options.assume), tuple(options.env), options.env_complete,
        tuple(options.not_installed), options.torch_version, options.show_disabled,
        options.keep_paths_by_hazard))  # (kept, the cached result holds every path; incremental.py, each region's)


def _store_result(results, result: ScanResult, all_paths: frozenset, disc, scanned: dict, program: Program,
                  search_path: list, options: ScanOptions, inc_state=None) -> None:
    import copy

    loaded = [(name, m.path, m.is_package) for name, m in program.modules.items()
              if m is not None and m.path and name not in scanned]
    # where imports were resolved outside the scanned paths: a module appearing there later changes them
    dirs = [str(Path(path).parent) for _, path, _ in loaded]
    if options.use_environment or options.search_path:
        dirs += [p for p in search_path if Path(p).is_dir()]
    plain = copy.copy(result)
    plain.program = None  # the program (every summary, every memo) is what a hit saves rebuilding
    if not options.keep_paths_by_hazard:  # (the pre-commit hook's: kept)
        plain.paths_by_hazard = plain.files_by_hazard = None
    results.store(plain, all_paths, [(f.module, f.path, f.is_package) for f in disc.files], loaded, dirs, inc_state)
