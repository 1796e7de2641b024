"""Bounded evaluation: policies run in a forked helper process, limited in time and memory.

A policy can run away (a huge comprehension, deep recursion): the interpreter
cannot be interrupted from Python, so evaluations run in a child process
forked from the one that holds the compiled policies. The parent sends a batch
of jobs (the evaluations of many files) and reads the answers, which come in
groups at least every few milliseconds. When none comes for :data:`TIME_LIMIT`
seconds, or the child dies (it went over :data:`MEMORY_LIMIT` bytes more than
it started with: the allocation fails), the child is replaced. The child writes
the position of the job it is on into a page shared with the parent before it
starts it, so the parent knows which job hit the limit without running it
again: that job is answered ``("limit", reason)``, the jobs the caller says are
related to it (the same rule, see :class:`Bounded`) ``("skipped", reason)``
without being run, and the others go on in the new child. A runaway job costs
one time limit. Without ``fork`` (Windows) jobs run in this process, unbounded.
"""

from __future__ import annotations

import mmap
import os
import pickle
import select
import signal
from collections.abc import Callable
from typing import Any

TIME_LIMIT = 10.0  # seconds per evaluation
MEMORY_LIMIT = 1 << 30  # bytes of address space an evaluation may add
FLUSH_ANSWERS = 512  # the helper sends answers in groups of at most this many ...
FLUSH_SECONDS = 0.005  # ... and at least this often


def _vm_size() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _send(fd: int, obj: Any) -> None:
    payload = pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    data = memoryview(len(payload).to_bytes(8, "little") + payload)
    while data:
        data = data[os.write(fd, data) :]


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes | None:
    """``n`` bytes, or ``None`` on end of file or when the deadline passes."""
    import time

    out = bytearray()
    while len(out) < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
        chunk = os.read(fd, n - len(out))
        if not chunk:
            return None
        out += chunk
    return bytes(out)


def _receive(fd: int, deadline: float | None) -> tuple[bool, Any]:
    head = _read_exact(fd, 8, deadline)
    if head is None:
        return False, None
    body = _read_exact(fd, int.from_bytes(head, "little"), None)
    if body is None:
        return False, None
    return True, pickle.loads(body)


class Bounded:
    """Runs ``work(job)`` for each job in a helper process; see the module docstring."""

    def __init__(
        self,
        work: Callable[[Any], Any],
        time_limit: float | None = None,
        memory_limit: int | None = None,
        related: Callable[[Any, Any], bool] | None = None,
    ) -> None:
        self.work = work
        # related(a, b): after job a hit a limit, job b of the same batch is not run ("skipped")
        self.related = related
        self._at: mmap.mmap | None = None  # the position of the job the helper is on
        self.time_limit = TIME_LIMIT if time_limit is None else time_limit
        self.memory_limit = MEMORY_LIMIT if memory_limit is None else memory_limit
        self._child: tuple[int, int, int] | None = None  # pid, to-child fd, from-child fd
        self._owner = 0

    def _start(self) -> tuple[int, int, int]:
        if self._child is not None and self._owner == os.getpid():
            return self._child
        self._child = None  # inherited through a fork of the lint: not ours
        self._at = mmap.mmap(-1, 8)
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the helper
            os.close(down_w)
            os.close(up_r)
            self._serve(down_r, up_w)
        os.close(down_r)
        os.close(up_w)
        self._child, self._owner = (pid, down_w, up_r), os.getpid()
        return self._child

    def _serve(self, inbox: int, outbox: int) -> None:  # pragma: no cover - runs in the helper
        code = 0
        try:
            import faulthandler

            faulthandler.disable()  # an evaluation that runs out of memory aborts: nothing to dump
            try:
                import resource

                limit = _vm_size() + self.memory_limit
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            except (ImportError, ValueError, OSError):
                pass
            import time

            while True:
                ok, message = _receive(inbox, None)
                if not ok:
                    break
                careful, jobs = message
                done: list = []
                last = time.monotonic()
                at = self._at
                for position, job in enumerate(jobs):
                    if at is not None:
                        at[:8] = position.to_bytes(8, "little")
                    try:
                        answer = ("ok", self.work(job))
                    except MemoryError:
                        answer = ("limit", "ran out of its memory limit")
                    except (KeyboardInterrupt, SystemExit):
                        raise
                    except BaseException as e:  # noqa: BLE001 - sent back as this job's answer (an engine's panic too)
                        answer = ("error", f"{type(e).__name__}: {e}")
                    done.append(answer)
                    # Answers go back in groups (fewer wake-ups of the parent), at least every
                    # FLUSH_SECONDS; one by one once the parent is looking for a runaway job.
                    if careful or len(done) >= FLUSH_ANSWERS or time.monotonic() - last >= FLUSH_SECONDS:
                        _send(outbox, done)
                        done, last = [], time.monotonic()
                if done:
                    _send(outbox, done)
        except BaseException:  # noqa: BLE001
            code = 70
        finally:
            os._exit(code)

    def _stop(self) -> None:
        if self._child is None or self._owner != os.getpid():
            self._child = None
            return
        pid, down, up = self._child
        self._child = None
        for fd in (down, up):
            try:
                os.close(fd)
            except OSError:
                pass
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (OSError, ChildProcessError):
                pass

    def close(self) -> None:
        self._stop()

    def __del__(self) -> None:
        try:
            self._stop()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def run(self, jobs: list[Any]) -> list[tuple[str, Any]]:
        """One answer per job: ``("ok", value)``, ``("error", text)`` or ``("limit", reason)``."""
        import time

        if not jobs:
            return []
        if not hasattr(os, "fork"):
            out = []
            for job in jobs:
                try:
                    out.append(("ok", self.work(job)))
                except Exception as e:  # noqa: BLE001
                    out.append(("error", f"{type(e).__name__}: {e}"))
            return out
        answers: dict[int, tuple[str, Any]] = {}
        while len(answers) < len(jobs):
            todo = [k for k in range(len(jobs)) if k not in answers]
            try:
                pid, down, up = self._start()
                if self._at is not None:
                    self._at[:8] = (0).to_bytes(8, "little")
                _send(down, (False, [jobs[k] for k in todo]))
            except OSError as e:
                self._stop()
                answers[todo[0]] = ("limit", f"could not run the evaluation ({e.strerror or e})")
                continue
            got = 0
            while got < len(todo):
                deadline = time.monotonic() + self.time_limit
                ok, group = _receive(up, deadline)
                if ok:
                    for answer in group:
                        answers[todo[got]] = answer
                        got += 1
                    continue
                at = int.from_bytes(self._at[:8], "little") if self._at is not None else got
                # the end of the pipe before the deadline: the helper died (it may not be reaped yet)
                died = time.monotonic() < deadline or self._exited()
                self._stop()
                # Answers of jobs before `at` that were not sent yet are lost: those jobs run again.
                culprit = todo[at] if got <= at < len(todo) else todo[got]
                reason = "ran out of its memory limit" if died else f"did not finish within {self.time_limit:g} s"
                answers[culprit] = ("limit", reason)
                if self.related is not None:
                    for k in todo:
                        if k not in answers and self.related(jobs[culprit], jobs[k]):
                            answers[k] = ("skipped", reason)
                break
        return [answers[k] for k in range(len(jobs))]

    def _exited(self) -> bool:
        """Whether the helper has died (rather than still running)."""
        if self._child is None:
            return True
        try:
            pid, _ = os.waitpid(self._child[0], os.WNOHANG)
        except ChildProcessError:
            return True
        if pid:
            self._child = (0,) + self._child[1:]  # reaped: nothing left to kill
            return True
        return False
