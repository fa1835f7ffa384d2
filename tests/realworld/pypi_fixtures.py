"""Download real-world fixture sources (sglang, flashinfer, pynvml) from PyPI, unpacked and cached.

Usable from pytest and from bench scripts::

    from tests.realworld.pypi_fixtures import site_root, FixtureUnavailable
    try:
        root = site_root("seed")        # dir holding sglang/ and flashinfer/ side by side
    except FixtureUnavailable as e:
        pytest.skip(str(e))

or from the shell::

    python tests/realworld/pypi_fixtures.py seed fixed current   # prints the site roots

Layout under ``cache_root()`` (``$COMPILE_LINT_FIXTURE_CACHE`` or ``~/.cache/compile-lint/pypi``)::

    <dist>-<version>/            unpacked wheel (or sdist package dirs); looks like site-packages
        .complete                marker: extraction finished
    sets/<name>-<hash>/          symlinks (or copies) of every top-level entry of the set's dists; the hash is
        .complete                of the set's manifest (held by this marker): a changed FIXTURE_SETS entry is a
                                 new directory

The downloaded code is never imported or executed by this module.  (Only wheels are
expected; if pip has to fall back to an sdist it prepares metadata with the sdist's
build backend, which is pip's doing, not ours.)

Every directory is built in a temp dir next to its final place and published with an
atomic ``os.rename``, so concurrent runs (pytest-xdist, parallel benches) are safe.
Set ``COMPILE_LINT_FIXTURE_OFFLINE=1`` to forbid network use (missing fixtures then raise
``FixtureUnavailable`` immediately).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

__all__ = [
    "FIXTURE_SETS",
    "FixtureUnavailable",
    "cache_root",
    "fetch",
    "fetch_set",
    "site_root",
]

FIXTURE_SETS: dict[str, list[tuple[str, str]]] = {
    # sglang 0.5.9 + flashinfer 0.6.3: the seed bug era (fp4_quantize traced under fullgraph)
    "seed": [("sglang", "0.5.9"), ("flashinfer-python", "0.6.3")],
    # first releases with the quantizer wrapped as an opaque custom op
    "fixed": [("sglang", "0.5.12"), ("flashinfer-python", "0.6.11.post1")],
    # latest checked, with pynvml (nvidia-ml-py, ctypes bindings to libnvidia-ml) that flashinfer.utils imports:
    # 13.610.43 is the one whose nvmlInitWithFlags calls its function pointer at pynvml.py:2980, the innermost
    # frame of Dynamo's stop in get_gpu_memory_bandwidth on the H200 (tests/realworld/gpu_truth/)
    "current": [("sglang", "0.5.23"), ("flashinfer-python", "0.7.2.post1"), ("nvidia-ml-py", "13.610.43")],
    # LoRA layers: a caller's guard on `self` decides the callee's (issue [B])
    "peft": [("peft", "0.17.1")],
    # vLLM's layers with the FlashInfer they call: a linear layer's quantization method is no fused-MoE one
    "vllm": [("vllm", "0.33.0"), ("flashinfer-python", "0.7.2.post1")],
}

COMPLETE = ".complete"
_PIP_TIMEOUT_S = float(os.environ.get("COMPILE_LINT_FIXTURE_TIMEOUT", "600"))


class FixtureUnavailable(RuntimeError):
    """The fixture could not be obtained (no network, PyPI error, unknown version, offline mode)."""


def cache_root() -> Path:
    env = os.environ.get("COMPILE_LINT_FIXTURE_CACHE")
    root = Path(env).expanduser() if env else Path.home() / ".cache" / "compile-lint" / "pypi"
    return root


# --------------------------------------------------------------------------- helpers


def _is_complete(d: Path) -> bool:
    return (d / COMPLETE).is_file()


def _rmtree(p: Path) -> None:
    shutil.rmtree(p, ignore_errors=True)


def _publish(tmp: Path, final: Path) -> Path:
    """Atomically move a fully built ``tmp`` (already holding ``.complete``) to ``final``."""
    for _ in range(3):
        try:
            os.rename(tmp, final)
            return final
        except OSError:
            if _is_complete(final):  # lost the race to another process: use theirs
                _rmtree(tmp)
                return final
            if final.exists():  # stale, incomplete leftover: move it aside and retry
                trash = Path(tempfile.mkdtemp(prefix=f".trash-{final.name}-", dir=final.parent))
                try:
                    os.rename(final, trash / "old")
                except OSError:
                    pass
                _rmtree(trash)
            else:
                raise
    raise OSError(f"could not publish {tmp} -> {final}")


# Fallback target when the host cannot use the published wheels (e.g. macOS, or a Python
# other than 3.11: sglang >= 0.5.11 ships only cp311 manylinux wheels and no sdist).  The
# Python sources are identical across wheel tags, and we never load the binaries.
_PINNED_WHEEL_ARGS = [
    "--only-binary=:all:",
    "--platform", "manylinux_2_34_x86_64", "--platform", "manylinux2014_x86_64",
    "--python-version", "3.11", "--implementation", "cp",
    "--abi", "cp311", "--abi", "abi3", "--abi", "none",
]


def _run_pip(dist: str, version: str, dest: Path, extra: list[str]) -> tuple[Path | None, str]:
    cmd = [
        sys.executable, "-m", "pip", "download",
        "--no-deps", *extra,
        "--ignore-requires-python",  # we only read the sources, so any interpreter may fetch them
        "--disable-pip-version-check", "--no-input", "--progress-bar", "off",
        "-d", str(dest), f"{dist}=={version}",
    ]
    dest.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        return None, f"timed out after {e.timeout}s"
    except OSError as e:
        return None, f"could not run pip: {e}"
    if proc.returncode != 0:
        lines = [l for l in (proc.stderr or proc.stdout or "").strip().splitlines() if "is ignored" not in l]
        return None, f"rc={proc.returncode}: " + "\n".join(l[:300] for l in lines[-6:])
    files = sorted(p for p in dest.iterdir() if p.is_file())
    for p in files:
        if p.name.endswith(".whl"):
            return p, ""
    for p in files:
        if p.name.endswith((".tar.gz", ".tgz", ".zip", ".tar.bz2")):
            return p, ""
    return None, f"no archive produced: {[p.name for p in files]}"


def _pip_download(dist: str, version: str, dest: Path) -> Path:
    """Download one archive of ``dist==version`` into ``dest``; prefer a wheel."""
    if os.environ.get("COMPILE_LINT_FIXTURE_OFFLINE"):
        raise FixtureUnavailable(f"{dist}=={version} not cached and COMPILE_LINT_FIXTURE_OFFLINE is set")
    errors = []
    first, err = _run_pip(dist, version, dest / "host", ["--no-binary=:none:"])
    if first is not None and first.name.endswith(".whl"):
        return first
    errors.append(f"[host] {err}" if err else f"[host] got sdist {first.name}")
    pinned, err = _run_pip(dist, version, dest / "pinned", _PINNED_WHEEL_ARGS)
    if pinned is not None:
        return pinned
    errors.append(f"[pinned cp311-manylinux] {err}")
    if first is not None:  # only an sdist exists
        return first
    raise FixtureUnavailable(f"pip download {dist}=={version} failed:\n" + "\n".join(errors))


def _extract_sdist(archive: Path, out: Path) -> None:
    """Extract an sdist and move its importable top-level packages/modules into ``out``."""
    raw = out / ".sdist"
    raw.mkdir()
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(raw)
    else:
        with tarfile.open(archive) as tf:
            if hasattr(tarfile, "data_filter"):
                tf.extractall(raw, filter="data")
            else:  # pragma: no cover - old Pythons
                tf.extractall(raw)
    tops = [p for p in raw.iterdir() if p.is_dir()]
    base = tops[0] if len(tops) == 1 else raw
    # common layouts: flat, src/, python/ (sglang's repo layout)
    for cand in (base / "src", base / "python", base):
        pkgs = [p for p in cand.iterdir() if p.is_dir() and (p / "__init__.py").is_file()] if cand.is_dir() else []
        if pkgs:
            for p in pkgs:
                if p.name not in {"tests", "test", "docs", "examples", "benchmarks"}:
                    os.rename(p, out / p.name)
            break
    else:
        _rmtree(raw)
        raise FixtureUnavailable(f"sdist {archive.name}: no top-level package found")
    _rmtree(raw)


def _unpack(archive: Path, out: Path) -> None:
    if archive.name.endswith(".whl"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(out)
    else:
        _extract_sdist(archive, out)


# --------------------------------------------------------------------------- public API


def fetch(dist: str, version: str) -> Path:
    """Return ``cache_root()/<dist>-<version>/``, downloading and unpacking it on first use."""
    root = cache_root()
    final = root / f"{dist}-{version}"
    if _is_complete(final):
        return final
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{dist}-{version}-", dir=root))
    try:
        dl = tmp / ".download"
        dl.mkdir()
        archive = _pip_download(dist, version, dl)
        out = tmp / "out"
        out.mkdir()
        _unpack(archive, out)
        (out / COMPLETE).write_text(f"{dist}=={version}\n{archive.name}\n")
        return _publish(out, final)
    finally:
        _rmtree(tmp)


def fetch_set(name: str) -> list[Path]:
    """Fetch every dist of ``FIXTURE_SETS[name]``; return their unpacked roots in order."""
    try:
        dists = FIXTURE_SETS[name]
    except KeyError:
        raise KeyError(f"unknown fixture set {name!r}; known: {sorted(FIXTURE_SETS)}") from None
    return [fetch(d, v) for d, v in dists]


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.symlink(src, dst, target_is_directory=src.is_dir())
    except (OSError, NotImplementedError):
        if src.is_dir():
            shutil.copytree(src, dst, symlinks=True)
        else:
            shutil.copy2(src, dst)


def site_root(name: str) -> Path:
    """One directory acting as site-packages for the whole set (e.g. ``sglang/`` + ``flashinfer/``)."""
    roots = fetch_set(name)
    manifest = "\n".join(f"{d}=={v}" for d, v in FIXTURE_SETS[name]) + "\n"
    sets = cache_root() / "sets"
    # keyed by the manifest: a set whose definition changed (pynvml added to "current") gets its own directory,
    # so neither an old cache nor a checkout still on the old definition (sharing the cache) masks it
    final = sets / f"{name}-{hashlib.blake2b(manifest.encode(), digest_size=5).hexdigest()}"
    marker = final / COMPLETE
    if marker.is_file() and marker.read_text() == manifest:
        return final
    sets.mkdir(parents=True, exist_ok=True)
    if final.exists():  # built for a different manifest: move aside (atomic) and rebuild
        trash = Path(tempfile.mkdtemp(prefix=f".trash-{name}-", dir=sets))
        try:
            os.rename(final, trash / "old")
        except OSError:
            pass
        _rmtree(trash)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{name}-", dir=sets))
    try:
        out = tmp / "out"
        out.mkdir()
        owner: dict[str, Path] = {}
        for r in roots:
            for entry in sorted(r.iterdir()):
                if entry.name == COMPLETE or entry.name.startswith(".tmp-"):
                    continue
                if entry.name in owner:
                    raise RuntimeError(
                        f"fixture set {name!r}: {entry.name!r} provided by both {owner[entry.name]} and {r}"
                    )
                owner[entry.name] = r
                _link_or_copy(entry.resolve(), out / entry.name)
        (out / COMPLETE).write_text(manifest)
        return _publish(out, final)
    finally:
        _rmtree(tmp)


if __name__ == "__main__":  # pragma: no cover
    names = sys.argv[1:] or list(FIXTURE_SETS)
    rc = 0
    for n in names:
        try:
            print(f"{n}\t{site_root(n)}")
        except FixtureUnavailable as e:
            print(f"{n}\tUNAVAILABLE: {e}", file=sys.stderr)
            rc = 1
    sys.exit(rc)
