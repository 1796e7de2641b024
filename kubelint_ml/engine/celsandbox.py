"""Every CEL evaluation bounded in memory and CPU time.

cel-expr-python has no cost tracking: its only limit is the comprehension
iteration budget, and an expression without any loop (eight chained
``replace()`` calls) can still build gigabytes of strings. So expressions are
evaluated in a helper process, forked from this one on the first evaluation
(it inherits the runtime and the compiled environment), whose address space
is capped at its size when forked plus :data:`MEMORY_BUDGET`. The parent
sends the expression and its variables over a pipe and waits: an evaluation
that uses more than :data:`CPU_BUDGET` seconds of CPU (or :data:`WALL_LIMIT`
seconds in all) is ended by killing the helper, one that runs out of memory
fails inside it; either way the caller gets :class:`CelEvalError` and the
next evaluation starts a new helper.

A value passed in several evaluations (the object, ``objects``,
``profile``) is sent once and kept by the helper until the parent's table of
sent values is full. Where ``fork`` is missing (Windows), evaluation runs in
this process with the iteration budget alone.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

# Address space a helper may add to what it had when forked.
MEMORY_BUDGET = 512 * 1024 * 1024
# CPU seconds one evaluation may use, and the wall-clock cap on top of it.
CPU_BUDGET = 2.0
WALL_LIMIT = 20.0
_SENT_MAX = 16  # values the helper keeps (by the parent's identity of the converted value)
_HEADER = struct.Struct("!I")


class SandboxFailure(Exception):
    """The evaluation went over a budget, or the helper died; str() is one line."""


def _send(fd: int, payload: bytes) -> None:
    view = memoryview(_HEADER.pack(len(payload)) + payload)
    while view:
        view = view[os.write(fd, view) :]


def _recv(fd: int) -> bytes | None:
    head = _read_exact(fd, _HEADER.size)
    if head is None:
        return None
    return _read_exact(fd, _HEADER.unpack(head)[0])


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of a process (Linux /proc), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _helper_loop(rfd: int, wfd: int, evaluate: Callable[[str, tuple, dict], Any]) -> None:
    """The helper: requests in, results out, until the parent closes the pipe."""
    import resource

    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends it with the parent, silently
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with open("/proc/self/statm", "rb") as fh:
            size = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = size + MEMORY_BUDGET if hard == resource.RLIM_INFINITY else min(size + MEMORY_BUDGET, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (OSError, ValueError, AttributeError):  # pragma: no cover - not Linux
        pass
    values: dict[int, Any] = {}
    while True:
        request = _recv(rfd)
        if request is None:
            return
        try:
            source, variables, refs, new, clear = pickle.loads(request)
            if clear:
                values.clear()
            values.update(new)
            reply: tuple = ("ok", evaluate(source, variables, {k: values[ref] for k, ref in refs.items()}))
        except MemoryError:
            reply = ("budget", f"memory budget exceeded (more than {MEMORY_BUDGET >> 20} MiB)")
        except Exception as exc:  # CelEvalError and anything the runtime raises
            text = str(exc)
            if "bad_alloc" in text:
                reply = ("budget", f"memory budget exceeded (more than {MEMORY_BUDGET >> 20} MiB)")
            else:
                reply = ("error", text)
        try:
            payload = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            payload = pickle.dumps(("budget", f"memory budget exceeded (more than {MEMORY_BUDGET >> 20} MiB)"))
        except Exception:  # a value pickle cannot carry: say what it was
            payload = pickle.dumps(("ok", repr(reply[1])[:1000]))
        _send(wfd, payload)


class Sandbox:
    """One helper process per evaluating process, started on first use.

    Threads take turns (``serve`` reviews on several): one request and its reply at a time on the
    helper's pipes, and one thread at a time stops or starts it."""

    def __init__(self, evaluate: Callable[[str, tuple, dict], Any]) -> None:
        self._evaluate = evaluate
        self._owner = 0
        self._pid = 0
        self._rfd = self._wfd = -1
        self._sent: dict[int, Any] = {}  # id(value) -> value, kept alive while the helper holds it
        self.generation = 0  # counts the helpers started: what one helper was sent, a new one lacks
        self._lock = threading.RLock()
        self._lock_pid = os.getpid()

    @property
    def lock(self) -> threading.RLock:
        """Held while a thread talks to the helper (a new one in a forked process: the lock may
        have been held by a thread the fork did not copy)."""
        if self._lock_pid != os.getpid():
            self._lock, self._lock_pid = threading.RLock(), os.getpid()
        return self._lock

    def _start(self) -> None:
        to_child_r, to_child_w = os.pipe()
        to_parent_r, to_parent_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the helper
            code = 0
            try:
                os.close(to_child_w)
                os.close(to_parent_r)
                _helper_loop(to_child_r, to_parent_w, self._evaluate)
            except BaseException:
                code = 1
            os._exit(code)
        os.close(to_child_r)
        os.close(to_parent_w)
        self._owner, self._pid = os.getpid(), pid
        self._rfd, self._wfd = to_parent_r, to_child_w
        self._sent = {}
        self.generation += 1

    def stop(self) -> None:
        with self.lock:
            pid, self._pid = self._pid, 0
            if pid > 0 and self._owner == os.getpid():
                for fd in (self._rfd, self._wfd):
                    try:
                        os.close(fd)
                    except OSError:
                        pass
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except (OSError, ChildProcessError):
                    pass
            self._sent = {}

    def ensure_started(self) -> None:
        """A helper of this process is running (one inherited through fork is not ours)."""
        with self.lock:
            if self._pid and self._owner != os.getpid():
                self._pid = 0
                self.generation += 1
            if not self._pid:
                self._start()

    def evaluate(self, source: str, variables: tuple, data: dict[str, Any]) -> Any:
        """The value of ``source``; raises SandboxFailure (budget) or ValueError (evaluation error)."""
        with self.lock:
            return self._evaluate_locked(source, variables, data)

    def _evaluate_locked(self, source: str, variables: tuple, data: dict[str, Any]) -> Any:
        self.ensure_started()
        clear = len(self._sent) + len(data) > _SENT_MAX
        if clear:
            self._sent = {}
        refs = {}
        new = {}
        for name, value in data.items():
            key = id(value)
            if key not in self._sent:
                self._sent[key] = value
                new[key] = value
            refs[name] = key
        request = pickle.dumps((source, variables, refs, new, clear), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            _send(self._wfd, request)
            reply = self._wait()
        except OSError:
            reply = None
        if reply is None:
            self.stop()
            raise SandboxFailure("the evaluation process ended (out of memory?)")
        status, value = pickle.loads(reply)
        if status == "ok":
            return value
        if status == "budget":
            self.stop()  # its memory may be fragmented or held: start afresh
            raise SandboxFailure(value)
        raise ValueError(value)

    def _wait(self) -> bytes | None:
        start = time.monotonic()
        cpu_start = None
        timeout = 0.05
        while True:
            ready, _, _ = select.select([self._rfd], [], [], timeout)
            if ready:
                return _recv(self._rfd)
            cpu = _cpu_seconds(self._pid)
            if cpu_start is None:
                # The evaluation started at most `timeout` ago: count from the helper's total
                # CPU before this request, approximated by its total now minus the time waited.
                cpu_start = (cpu - (time.monotonic() - start)) if cpu is not None else None
            used_wall = time.monotonic() - start
            over_cpu = cpu is not None and cpu_start is not None and cpu - cpu_start > CPU_BUDGET
            if over_cpu or used_wall > WALL_LIMIT or (cpu is None and used_wall > CPU_BUDGET):
                self.stop()
                what = f"{CPU_BUDGET:g} s of CPU" if over_cpu or cpu is None else f"{WALL_LIMIT:g} s"
                raise SandboxFailure(f"time budget exceeded (more than {what} for one evaluation)")
            timeout = min(0.25, timeout * 2)
