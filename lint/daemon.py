"""``compile-lint daemon``: a warm process that answers ``scan`` and ``precommit`` runs (``--daemon``).

Type checkers answer an edit in about a second by keeping their analysis in a process that outlives the
command (dmypy, pyright's language server).  An incremental scan of a site-packages spends some 10 s of a
one-file edit reading and writing its state (280 MB pickled, lint/incremental.py): a daemon keeps that state
in memory between runs (keptstates.keep_states_in_memory) and writes it after it has answered.

- ``compile-lint daemon start`` starts one per user, environment (venv) and analyzer version, listening on a Unix
  socket in the user cache directory (lint/cachedirs.py); ``stop`` and ``status`` do what they say.  It stops
  by itself after ``--idle-timeout`` seconds without a request.
- ``compile-lint scan ... --daemon`` (and ``precommit --daemon``) sends its arguments, working directory and
  environment to the daemon, which runs the very same command in its process and sends back its exit code
  and output; with no daemon running, the command runs in its own process, as without ``--daemon``.
- Requests are answered one at a time, in order; the state a request made is written before the next one is
  taken.  The analyzer never imports the scanned code, so one process may serve any project.

The protocol: one request per connection, each way an 8-byte big-endian length and a JSON object; a run's
answer then carries the command's output as bytes (``stdout_bytes`` of them, in the client's stdout encoding):
the pre-commit hook's JSON report of a model that reaches 2,602 hazards is 56 MB, and escaping it into the JSON
answer, decoding it and writing it as text again took 0.6 s of a 2.3 s answer.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Optional

PROTOCOL = 2
HELP = ("Run in the warm `compile-lint daemon` (started with `compile-lint daemon start`): an edit's incremental "
        "scan without reading or writing its state; in this process if none is running.")
IDLE_TIMEOUT = 3 * 3600  # seconds without a request before the daemon stops by itself
# After each answer the daemon collects the garbage of the previous scan (its program: cycles), then freezes
# what survived (gc.freeze), mostly the kept state: a full collection traversed the state's tens of millions
# of objects each time (4.3 s after each answer on the bench site, while a next request waited).  A cycle
# that dies among frozen objects waits for the full collection of every FULL_COLLECTION_EVERY-th answer.
FULL_COLLECTION_EVERY = 8
_UNIX_PATH_MAX = 100  # sun_path holds 104 (macOS) or 108 (Linux) bytes


def available() -> bool:
    return hasattr(socket, "AF_UNIX") and os.name == "posix"


def socket_path() -> Path:
    """Where the daemon for this environment and analyzer version listens."""
    from .cachedirs import user_cache_dir
    from .resultcache import analyzer_fingerprint

    # the environment (a venv: its prefix), not the interpreter's name: `python` and `python3` are one
    tag = hashlib.blake2b(f"{PROTOCOL}\0{sys.prefix}\0{analyzer_fingerprint()}".encode(),
                          digest_size=6).hexdigest()
    path = user_cache_dir() / "daemon" / f"{tag}.sock"
    if len(os.fsencode(path)) > _UNIX_PATH_MAX:  # a deep cache directory: the socket goes in the temp dir
        import tempfile

        path = Path(tempfile.gettempdir()) / f"compile-lint-{os.getuid()}" / f"{tag}.sock"
    return path


def log_path(sock: Path) -> Path:
    return sock.with_suffix(".log")


# ------------------------------------------------------------------------------------------ the wire
def _send(conn: socket.socket, obj) -> None:
    data = json.dumps(obj).encode()
    conn.sendall(struct.pack(">Q", len(data)) + data)


def _recv(conn: socket.socket):
    head = _recv_exactly(conn, 8)
    if head is None:
        return None
    body = _recv_exactly(conn, struct.unpack(">Q", head)[0])
    return None if body is None else json.loads(body)


def _recv_exactly(conn: socket.socket, n: int) -> Optional[bytes]:
    chunks, got = [], 0
    while got < n:
        chunk = conn.recv(min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def request(obj, sock: Optional[Path] = None, timeout: Optional[float] = None):
    """The daemon's answer to ``obj``, or None if no daemon listens at ``sock``; TimeoutError if one listens
    but has not answered within ``timeout`` seconds (it answers one request at a time).  A run's answer holds
    its output as bytes (``stdout``)."""
    sock = sock or socket_path()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        try:
            conn.connect(str(sock))
        except (FileNotFoundError, ConnectionRefusedError):
            return None
        _send(conn, obj)
        answer = _recv(conn)
        if isinstance(answer, dict) and "stdout_bytes" in answer:
            answer["stdout"] = _recv_exactly(conn, int(answer.pop("stdout_bytes")))
            if answer["stdout"] is None:
                raise ConnectionResetError("the daemon's answer ended early")
        return answer
    finally:
        conn.close()


# ------------------------------------------------------------------------------------------ client
def run_in_daemon(argv: list) -> Optional[int]:
    """Run ``compile-lint ARGV`` in the daemon: its exit code (its output written here), or None when no
    daemon answers (then the caller runs the command itself)."""
    if not available():
        return None
    sock = socket_path()
    try:
        answer = request({"op": "run", "protocol": PROTOCOL, "argv": argv, "cwd": os.getcwd(),
                          "env": dict(os.environ), "tty": _isatty(sys.stdout),
                          "encoding": getattr(sys.stdout, "encoding", None) or "utf-8",
                          "errors": getattr(sys.stdout, "errors", None) or "strict"}, sock)
    except OSError as e:  # the daemon went away while answering
        print(f"compile-lint: the daemon at {sock} failed ({e}; its log: {log_path(sock)}); running here",
              file=sys.stderr)
        return None
    if answer is None or "rc" not in answer:
        if answer is not None or sock.exists():
            print(f"compile-lint: the daemon at {sock} did not answer (its log: {log_path(sock)}); running here",
                  file=sys.stderr)
        return None
    _write_bytes(sys.stdout, answer["stdout"])
    sys.stderr.write(answer["stderr"])
    return int(answer["rc"])


def _write_bytes(stream, data: bytes) -> None:
    """Write ``data``, text already in ``stream``'s encoding, to it: to its buffer where it has one."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(data.decode(getattr(stream, "encoding", None) or "utf-8", "replace"))
        return
    stream.flush()
    buffer.write(data)
    buffer.flush()


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


# ------------------------------------------------------------------------------------------ server
class _Captured(io.StringIO):
    """The command's stdout as the client's terminal would take it (colour only where the client's is a tty)."""

    def __init__(self, tty: bool = False):
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def _run_command(req: dict) -> dict:
    """Run one command as ``compile-lint`` would in the client's directory and environment."""
    from .cli import main
    from .dynamo import trace_rules
    from .postwalk import _RELPATH_MEMO

    out, err = _Captured(bool(req.get("tty"))), _Captured()
    cwd, env, argv = os.getcwd(), dict(os.environ), sys.argv
    trace_rules.clear_memo()  # another torch may have been installed since: read them as a new process would
    _RELPATH_MEMO.clear()
    try:
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])
        os.environ["PYTHONHASHSEED"] = "0"  # what this process runs under (entry() re-executes a command so)
        sys.argv = ["compile-lint", *req["argv"]]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(args=list(req["argv"]), prog_name="compile-lint")
                code = 0
            except SystemExit as e:
                code = e.code
    except OSError as e:  # the client's directory is gone
        return {"rc": 2, "stdout": b"", "stderr": f"compile-lint: error: {e}\n"}
    finally:
        sys.argv = argv
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
    if isinstance(code, str):
        err.write(code + "\n")
        code = 2
    try:
        text = out.getvalue().encode(req.get("encoding") or "utf-8", req.get("errors") or "strict")
    except (LookupError, UnicodeError) as e:  # (what writing it to the client's stdout would have raised)
        return {"rc": 2, "stdout": b"", "stderr": err.getvalue() + f"compile-lint: error: {e}\n"}
    return {"rc": code if isinstance(code, int) else 0, "stdout": text, "stderr": err.getvalue()}


def serve(sock: Path, idle_timeout: float = IDLE_TIMEOUT) -> None:
    """Answer requests at ``sock`` until told to stop or idle for ``idle_timeout`` seconds (0: never)."""
    import gc

    from . import keptstates
    from .cache import end_of_answer, keep_loaded_summaries
    from .discover import keep_discoveries
    from .program.locator import keep_package_indexes
    from .postwalk import keep_merges
    from .report import keep_encoded_findings
    from .suppressions import keep_scanned_sources

    keptstates.keep_states_in_memory()
    keep_package_indexes()
    keep_discoveries()
    keep_encoded_findings()
    keep_merges()
    keep_loaded_summaries()
    keep_scanned_sources()
    sock.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = sock.with_name(f".{sock.name}.{os.getpid()}")
    try:
        tmp.unlink()
    except FileNotFoundError:
        pass
    listener.bind(str(tmp))
    os.chmod(tmp, 0o600)  # the user's own: a request runs commands as the daemon's user
    listener.listen(16)
    os.replace(tmp, sock)  # (a stale socket of a dead daemon is replaced)
    ours = os.stat(sock).st_ino
    started, served = time.time(), 0
    log(f"serving at {sock} (pid {os.getpid()})")
    try:
        while True:
            listener.settimeout(idle_timeout or None)
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                log("idle: stopping")
                break
            with conn:
                conn.settimeout(None)
                try:
                    req = _recv(conn)
                except (OSError, ValueError):
                    req = None  # a client that went away or sent garbage: nothing to answer
                if not isinstance(req, dict):
                    continue
                op = req.get("op")
                if op == "stop":
                    _answer(conn, {"stopped": os.getpid()})
                    break
                if op == "status":
                    _answer(conn, {"pid": os.getpid(), "uptime_s": round(time.time() - started, 1),
                                   "served": served, "rss_mb": _rss_mb(), "protocol": PROTOCOL,
                                   "states_kept": len(keptstates._KEPT_STATES or ())})
                    continue
                if op != "run" or req.get("protocol") != PROTOCOL:
                    _answer(conn, {"error": f"unknown request {op!r}"})
                    continue
                t0 = time.perf_counter()
                try:
                    answer = _run_command(req)
                except BaseException as e:  # noqa: BLE001 - one bad request never takes the daemon down
                    answer = {"rc": 2, "stdout": b"", "stderr": f"compile-lint: internal error in the daemon: "
                                                               f"{type(e).__name__}: {e}\n"}
                served += 1
                end_of_answer()
                _answer(conn, answer)  # (a client gone away: what the command wrote stays)
            # after the answer: the state the command made, then the garbage of the previous one
            for path, problem in keptstates.write_kept_states():
                log(f"{path}: {problem}")
            if served % FULL_COLLECTION_EVERY == 0:
                gc.unfreeze()  # (now and then: cycles that died among what an earlier answer kept)
            gc.collect()
            gc.freeze()
            log(f"{' '.join(req.get('argv', ()))[:200]}: rc {answer['rc']}, "
                f"{time.perf_counter() - t0:.1f} s with the state written")
    finally:
        try:
            if os.stat(sock).st_ino == ours:  # (not a newer daemon's)
                sock.unlink()
        except OSError:
            pass
        listener.close()
        log("stopped")


def _answer(conn: socket.socket, obj) -> None:
    """Send ``obj``; a run's answer (its ``stdout``: bytes) as a JSON header and then the output."""
    try:
        out = obj.get("stdout")
        if isinstance(out, bytes):
            head = dict(obj, stdout_bytes=len(out))
            del head["stdout"]
            _send(conn, head)
            conn.sendall(out)
        else:
            _send(conn, obj)
    except OSError:
        pass  # the client went away (interrupted, or timed out waiting): the daemon goes on


def log(line: str) -> None:
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}", file=sys.stderr, flush=True)


def _rss_mb() -> int:
    try:
        import resource

        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(rss / 1024 / (1024 if sys.platform == "darwin" else 1))
    except (ImportError, OSError):
        return 0


# ------------------------------------------------------------------------------------------ start / stop
def start(idle_timeout: float = IDLE_TIMEOUT, wait_s: float = 60.0) -> tuple:
    """(pid, socket, whether it was running already) of the daemon, started if none answers."""
    import subprocess

    sock = socket_path()
    try:
        got = request({"op": "status"}, sock, timeout=5)
    except TimeoutError:
        return None, sock, True  # running, and busy with a request
    if got is not None:
        return got["pid"], sock, True
    sock.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    env = dict(os.environ, PYTHONHASHSEED="0")
    boot = ("import sys; del sys.path[0]; from compile_lint.daemon import _main; "
            f"_main({str(sock)!r}, {float(idle_timeout)!r})")
    with open(log_path(sock), "ab") as logf:
        proc = subprocess.Popen([sys.executable, "-c", boot], stdin=subprocess.DEVNULL, stdout=logf,
                                stderr=logf, env=env, cwd=str(sock.parent), start_new_session=True)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            got = request({"op": "status"}, sock, timeout=5)
        except TimeoutError:
            got = None
        if got is not None:
            return got["pid"], sock, False
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise RuntimeError(f"the daemon did not start (see {log_path(sock)})")


def stop(wait_s: float = 120.0) -> Optional[int]:
    """The pid of the daemon stopped, or None if none was running.  (One answering a request stops after it.)"""
    sock = socket_path()
    got = request({"op": "stop"}, sock)
    if got is None:
        return None
    deadline = time.monotonic() + wait_s
    while sock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return got.get("stopped")


def status(timeout: Optional[float] = 600) -> Optional[dict]:
    """The daemon's pid, uptime, requests served, memory; None if none answers.  (It answers after the request
    it is busy with, and the state that request made is written.)"""
    return request({"op": "status"}, socket_path(), timeout=timeout)


def _main(sock: str, idle_timeout: float) -> None:  # pragma: no cover - the daemon process (tests start it)
    import gc

    gc.disable()  # as a command's process: scan() pauses it anyway; collected after each answer instead
    serve(Path(sock), idle_timeout)
    os._exit(0)
