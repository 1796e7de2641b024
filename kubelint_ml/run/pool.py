"""The fork pool: work cut into numbered spans, shared by this process and forked workers.

Nothing here knows what a span holds. :func:`fork_map` runs ``local(n)`` in
this process and ``remote(n)`` in ``jobs - 1`` forked workers, spans taken from
one queue; a worker sends each result back pickled, and the functions it runs
(and everything they reach) are inherited through fork, never pickled. The
first pass (:mod:`kubelint_ml.run.facts`) and the second
(:mod:`kubelint_ml.run.parallel`) both use it.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from typing import Any

# The span queue: span numbers as 4-byte records in one pipe, written whole before
# any worker starts, that the parent and every worker read from (a read of one
# record is atomic). At most MAX_SPANS records: the queue fits in a pipe's buffer.
MAX_SPANS = 1024
_RECORD = 4


def spans(count: int, jobs: int) -> list[tuple[int, int]]:
    """Contiguous slices of ``count`` inputs, in order.

    About 32 per process, at most 64 inputs each (more only when there would be
    over :data:`MAX_SPANS`). The first is a few inputs: the parent runs it
    before forking, to warm up. The last ``2 * jobs`` spans' worth come in
    quarter-size spans, so that the processes run out of work together.
    """
    size = max(1, min(64, count // (jobs * 32)), -(-count // MAX_SPANS))
    out: list[tuple[int, int]] = []
    i = min(4, size, count)
    if i:
        out.append((0, i))
    tail_start = max(i, count - 2 * jobs * size)
    for step, end in ((size, tail_start), (max(1, size // 4), count)):
        while i < end:
            out.append((i, min(end, i + step)))
            i = out[-1][1]
    if len(out) > MAX_SPANS:  # many jobs: no finer tail
        return [(i, min(count, i + size)) for i in range(0, count, size)]
    return out


def _next_span(queue: int) -> int | None:
    record = os.read(queue, _RECORD)
    return int.from_bytes(record, "little") if len(record) == _RECORD else None


def _child(queue: int, out: int, work: Callable[[int], Any]) -> None:
    """A forked worker: run ``work`` on spans from the queue, sending each result back as a
    length-prefixed pickle; never returns."""
    import pickle

    code = 0
    try:
        while (n := _next_span(queue)) is not None:
            payload = pickle.dumps((n, work(n)), pickle.HIGHEST_PROTOCOL)
            data = memoryview(len(payload).to_bytes(8, "little") + payload)
            while data:
                data = data[os.write(out, data) :]
    except BaseException:  # noqa: BLE001 - the parent does whatever this worker did not return
        code = 70
    finally:
        os._exit(code)


class Inbox:
    """What one worker has sent so far: complete records are taken out as they arrive."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid, self.fd = pid, fd
        self.buffer = bytearray()
        self.open = True

    def read(self, block: bool) -> list[tuple[int, Any]]:
        """Read what is there (``block``: wait for more, until the worker closes its end)."""
        import pickle

        if block:
            os.set_blocking(self.fd, True)
        while self.open:
            try:
                data = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                break
            if not data:
                self.open = False
                break
            self.buffer += data
        out = []
        view = memoryview(self.buffer)
        at = 0
        while len(view) - at >= 8:
            size = int.from_bytes(view[at : at + 8], "little")
            if len(view) - at - 8 < size:
                break
            try:
                out.append(pickle.loads(view[at + 8 : at + 8 + size]))
            except Exception:  # noqa: BLE001 - cannot happen short of a bug; the span is run again
                pass
            at += 8 + size
        view.release()
        del self.buffer[:at]
        return out


def fork_map(
    count: int,
    jobs: int,
    local: Callable[[int], Any],
    remote: Callable[[int], Any],
    decode: Callable[[Any], Any],
    first: Any = None,
    notes: list[str] | None = None,
) -> list[Any]:
    """Every span's result, computed by this process and ``jobs - 1`` forked workers.

    Spans ``0 .. count - 1`` are taken from one queue: this process runs
    ``local(n)``, a worker runs ``remote(n)`` and sends the result back, which
    ``decode`` turns into a local one; the parent does that between its own
    spans, so that work is shared out by the queue too. ``first``: span 0's
    result, when the caller computed it before the fork (to warm up). A worker
    that dies (killed by the OOM killer, say) loses nothing: the spans it did
    not return are computed here.
    """
    import signal

    results: list[Any] = [None] * count
    start = 0
    if first is not None:
        results[0], start = first, 1
    queue, feed = os.pipe()
    children: list[Inbox] = []
    try:
        records = b"".join(n.to_bytes(_RECORD, "little") for n in range(start, count))
        while records:
            records = records[os.write(feed, records) :]
        os.close(feed)
        gc.freeze()  # what the workers inherit is never scanned by their collector (nor copied for it)
        try:
            for _ in range(min(jobs, count - start) - 1):
                read_end, write_end = os.pipe()
                try:
                    pid = os.fork()
                except OSError:  # no more processes or memory: go on with the workers there are
                    os.close(read_end)
                    os.close(write_end)
                    break
                if pid == 0:
                    os.close(read_end)
                    _child(queue, write_end, remote)
                os.close(write_end)
                os.set_blocking(read_end, False)
                _grow_pipe(read_end)
                children.append(Inbox(pid, read_end))
        finally:
            gc.unfreeze()

        def receive(block: bool) -> None:
            for inbox in children:
                for n, payload in inbox.read(block):
                    results[n] = decode(payload)

        while (n := _next_span(queue)) is not None:
            results[n] = local(n)
            receive(block=False)
        receive(block=True)
        lost = [n for n, r in enumerate(results) if r is None]
        if lost and notes is not None:
            notes.append(f"a worker process exited early; {len(lost)} of {count} parts were done again")
        for n in lost:
            results[n] = local(n)
    except BaseException:
        for inbox in children:
            try:
                os.kill(inbox.pid, signal.SIGKILL)
            except OSError:
                pass
        raise
    finally:
        os.close(queue)
        for inbox in children:
            os.close(inbox.fd)
            try:
                os.waitpid(inbox.pid, 0)
            except ChildProcessError:
                pass
    return results


def _grow_pipe(fd: int) -> None:
    """Room for several parts in a result pipe (Linux), so a worker rarely waits for the parent to read."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass
