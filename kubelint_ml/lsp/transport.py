"""Reading the client's frames off stdin, hardened: what pygls's own reader does not survive.

pygls 2's reader takes only ``Content-Length: N\\r\\n`` exactly (a header ended by a bare LF is never
seen, so the stream is lost), reads N bytes whatever they are (a length that does not match the
body desynchronises every later frame), and ``read(10**12)`` raises out of its loop (the server
dies). This one:

- takes header lines ended by CRLF or LF, header names in any case, other headers ignored;
- refuses a frame longer than :data:`MAX_FRAME` with a logged reason and ends the server with a
  non-zero status (reading and dropping a terabyte is no way back in sync);
- when a body does not parse, looks for the next ``Content-Length:`` header in it and starts again
  there (the length was too long and swallowed the next frame), or reads on to the next header and
  tries the body with what follows it (the length was too short): either way the frame is dropped
  with a log line, or answered, and the frames after it are read;
- hands each message on as a dict, or as ``None`` at the end of the input.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable
from typing import Any

log = logging.getLogger("kubelint-ml.lsp")

# The largest frame taken: a buffer at `check`'s default size limit, JSON-escaped, with room.
MAX_FRAME = 128 * 1024 * 1024
_HEADER = re.compile(rb"content-length[ \t]*:[ \t]*([0-9]+)[ \t]*", re.IGNORECASE)
_NEXT = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_CHUNK = 1 << 16
RESYNC_WAIT = 0.5  # seconds: how long the rest of a body too short for its header is waited for


class FrameError(Exception):
    """The stream cannot be read on: the server must stop (with a non-zero status)."""


class Reader:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray()
        self.eof = False

    def _fill(self, timeout: float | None = None) -> bool:
        """Read what comes next (waiting at most ``timeout`` seconds for it, when given)."""
        if self.eof:
            return False
        if timeout is not None:
            import select

            ready, _, _ = select.select([self.fd], [], [], timeout)
            if not ready:
                return False
        chunk = os.read(self.fd, _CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def _line(self) -> bytes | None:
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line = bytes(self.buf[: i + 1])
                del self.buf[: i + 1]
                return line
            if len(self.buf) > 64 * 1024:
                # a header line this long is no header: keep looking for one
                keep = self.buf[-64:]
                self.buf = bytearray(keep)
            if not self._fill():
                if self.buf:
                    line = bytes(self.buf)
                    self.buf.clear()
                    return line
                return None

    def _exactly(self, n: int) -> bytes:
        """The next ``n`` bytes; fewer when the input pauses with a whole JSON message read (a length
        longer than its body, and nothing after it: the message is taken, not waited on for ever)."""
        while len(self.buf) < n:
            if self._fill(RESYNC_WAIT):
                continue
            if self.eof:
                break
            if self.buf and _complete(bytes(self.buf)):
                log.warning("a frame's Content-Length (%d) is longer than its body (%d bytes)", n, len(self.buf))
                break
            if not self._fill():  # a pause in a long frame: wait for the rest
                break
        body = bytes(self.buf[:n])
        del self.buf[:n]
        return body

    def frame(self) -> bytes | None:
        """The next frame's body (None at the end of the input). Raises FrameError."""
        length: int | None = None
        while True:
            line = self._line()
            if line is None:
                return None
            stripped = line.strip()
            if not stripped:
                if length is not None:
                    break
                continue  # blank lines between frames
            found = _HEADER.search(stripped)
            if found is not None:
                length = int(found.group(1))
            elif b":" not in stripped or not stripped.split(b":", 1)[0].strip().replace(b"-", b"").isalnum():
                log.warning("skipped %d bytes that are no frame header", len(line))
                length = None  # garbage: look for the next Content-Length
        if length > MAX_FRAME:
            raise FrameError(f"a frame of {length} bytes is over the {MAX_FRAME}-byte limit")
        return self._exactly(length)

    def unread(self, data: bytes) -> None:
        self.buf[:0] = data


def parse(reader: Reader, body: bytes) -> tuple[Any, str]:
    """The message of ``body`` as JSON, or (None, why) when it cannot be read; resynchronises the
    reader when the body's length did not match its header."""
    try:
        return json.loads(body), ""
    except (ValueError, RecursionError) as first:
        why = f"{type(first).__name__}: {first}"
    # Too long: the body swallowed (part of) the next frame. What comes before the next header is the
    # message; the rest goes back to be read.
    found = _NEXT.search(body, 1)
    if found is not None:
        reader.unread(body[found.start() :])
        head = body[: found.start()].rstrip()
        try:
            return json.loads(head), ""
        except (ValueError, RecursionError):
            return None, why
    # Too short: the message goes on up to the next header (or is complete with what follows soon).
    rest = bytearray()
    while True:
        found = _NEXT.search(reader.buf)
        if found is not None:
            rest += reader.buf[: found.start()]
            del reader.buf[: found.start()]
            break
        rest += reader.buf
        reader.buf.clear()
        if _complete(body + bytes(rest)) or len(rest) > MAX_FRAME or not reader._fill(RESYNC_WAIT):
            break
    try:
        return json.loads(body + bytes(rest)), ""
    except (ValueError, RecursionError):
        return None, why


def _complete(data: bytes) -> bool:
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        return False
    return True


def read_messages(fd: int, deliver: Callable[[Any, str], None]) -> int:
    """Read frames until the end of the input; ``deliver(message, why)`` for each (``message`` None
    and ``why`` set when a frame could not be read). The status the server should end with when the
    input ends: 0, or 2 after a frame that cannot be read on from."""
    reader = Reader(fd)
    while True:
        try:
            body = reader.frame()
        except FrameError as e:
            log.error("%s: the server stops", e)
            return 2
        except OSError as e:
            log.error("reading the input failed: %s", e)
            return 2
        if body is None:
            return 0
        message, why = parse(reader, body)
        deliver(message, why)
