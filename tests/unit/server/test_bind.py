"""The server's listening socket (`bind`): what the connections it accepts are like."""

from __future__ import annotations

import asyncio
import socket

from gemwire.server.run import bind


def test_an_accepted_connection_sends_at_once() -> None:
    # uvicorn serves through asyncio, which turns Nagle's algorithm off (TCP_NODELAY) only
    # on sockets whose proto is TCP. With proto 0 the first events of each turn on an SSE
    # stream waited for the client's delayed ACK: 40 ms (bench/serve.py).
    listener = bind("127.0.0.1", 0)
    host, port = listener.getsockname()[:2]

    async def accepted_nodelay() -> int:
        got: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def on_connection(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            got.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connection, sock=listener)
        async with server:
            _, writer = await asyncio.open_connection(host, port)
            value = await got
            writer.close()
            await writer.wait_closed()
        return value

    assert asyncio.run(accepted_nodelay()) != 0
