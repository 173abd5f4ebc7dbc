"""stdin and stdout for the SDK's stdio transport, read and written on the event loop.

The SDK's own stdio server reads each line and writes each reply through a worker thread
(``anyio.wrap_file``): three thread hops per tool call, each of which may wait for the GIL for a
switch interval (5 ms) while the loop runs an env step. Here stdin is an asyncio pipe stream (no
thread) and a reply is written straight to the descriptor (small, and the one client reads it),
handed to the SDK's ``stdio_server(stdin=..., stdout=...)``, which takes any object with its
file API. Where stdin is not a pipe, socket or terminal (a regular file), :func:`open_pipes`
gives None and the SDK's threads are used.
"""

from __future__ import annotations

import asyncio
import os

#: The longest line (one JSON-RPC message) read from stdin: a whole plan for a large instance.
LINE_LIMIT = 64 * 1024 * 1024


class LineReader:
    """The lines of stdin, as the SDK reads them (``async for line in stdin``)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class LineWriter:
    """stdout as the SDK writes it (``await stdout.write(text)``, ``await stdout.flush()``)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def write(self, text: str) -> int:
        data = memoryview(text.encode("utf-8"))
        while data:
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:  # a descriptor shared with the non-blocking stdin: wait a little
                await asyncio.sleep(0.001)
                continue
            data = data[written:]
        return len(text)

    async def flush(self) -> None:
        """Nothing to flush: every write went to the descriptor."""

    def close(self) -> None:
        os.close(self._fd)


async def open_pipes(stdin_fd: int, stdout_fd: int) -> tuple[LineReader, LineWriter] | None:
    """Reader and writer over copies of the two descriptors; None where stdin is a regular file."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    source = os.fdopen(os.dup(stdin_fd), "rb", buffering=0)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), source)
    except (ValueError, OSError):
        source.close()
        return None
    return LineReader(reader), LineWriter(os.dup(stdout_fd))
