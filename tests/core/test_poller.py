"""The epoll set every watched command's descriptors share (``_spawn.Poller``)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from shellgate.executors._spawn import Poller


async def test_a_failing_callback_is_reported_and_the_others_still_run() -> None:
    loop = asyncio.get_running_loop()
    poller = Poller.of(loop)
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    pipes = [os.pipe2(os.O_CLOEXEC) for _ in range(2)]
    ran: list[int] = []
    both = loop.create_future()

    def broken() -> None:
        ran.append(0)
        poller.remove(pipes[0][0])
        if len(ran) == 2:
            both.set_result(None)
        raise RuntimeError("a bug in a watch")

    def fine() -> None:
        ran.append(1)
        poller.remove(pipes[1][0])
        if len(ran) == 2:
            both.set_result(None)

    try:
        poller.add(pipes[0][0], broken)
        poller.add(pipes[1][0], fine)
        for _, write in pipes:
            os.write(write, b"x")
        await asyncio.wait_for(both, 5)
    finally:
        loop.set_exception_handler(None)
        for fds in pipes:
            for fd in fds:
                os.close(fd)
    assert sorted(ran) == [0, 1]
    assert [type(c["exception"]) for c in reported] == [RuntimeError]


async def test_the_loop_holds_no_reader_of_it_while_nothing_is_watched() -> None:
    loop = asyncio.get_running_loop()
    poller = Poller.of(loop)
    assert Poller.of(loop) is poller  # one per loop
    read, write = os.pipe2(os.O_CLOEXEC)
    try:
        poller.add(read, lambda: None)
        assert loop.remove_reader(poller._epoll.fileno())  # it was the loop's reader
        loop.add_reader(poller._epoll.fileno(), poller._dispatch)
        poller.remove(read)
        assert not loop.remove_reader(poller._epoll.fileno())  # and is no more
    finally:
        os.close(read)
        os.close(write)
