"""A fake OpenAI-compatible chat server on loopback, for tests and benchmarks.

::

    with FakeOpenAIServer(lambda prompt: "The answer is: 4", latency_s=0.2, slots=8) as server:
        lm = open_lm(f"openai:fake@{server.base_url}")

It answers ``POST /v1/chat/completions`` with ``reply(last message)``: a
text is sent as a completion, bytes as the raw body (to test what a client
makes of a malformed reply). A
request first waits for one of ``slots`` (a server decoding that many
sequences at once; None: no limit), then holds it ``latency_s`` seconds, so
its throughput is at most ``slots / latency_s`` calls per second. Other
processes can reach it too (a Ray actor, a CLI run in a subprocess): it is
a real HTTP server in a thread of this one.

:meth:`FakeOpenAIServer.freeze` makes it hang: connections are taken and
requests read, and nothing is answered until :meth:`~FakeOpenAIServer.thaw`.
``GET /v1/models`` is answered (a probe of the server), as real servers do.
:meth:`FakeOpenAIServer.kill` makes it go away mid-run: the listening socket
closes (later connections are refused) and open connections are cut.
:meth:`~FakeOpenAIServer.down` does the same for a while and
:meth:`~FakeOpenAIServer.up` brings it back on the same port (an outage).

``faults=Faults(rate=0.1)`` makes it flaky: that share of requests, drawn
from a seeded generator, gets one fault of ``kinds`` instead of its answer
(``FAULT_KINDS``: HTTP 429 with a ``Retry-After``, 500, 503, a body cut off
half-way, a connection closed with no response); ``faulted`` counts them by
kind. The soak benchmark (``benchmarks/soak.py``) runs evals against it.
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

#: What a flaky server does instead of answering (see :class:`Faults`).
FAULT_KINDS = ("429", "500", "503", "drop", "close")


@dataclass(frozen=True)
class Faults:
    """``rate`` of requests get one fault of ``kinds`` (drawn with ``seed``); a 429 says
    ``Retry-After: retry_after_s``."""

    rate: float = 0.0
    kinds: tuple[str, ...] = FAULT_KINDS
    seed: int = 0
    retry_after_s: float = 1.0

    def __post_init__(self) -> None:
        unknown = set(self.kinds) - set(FAULT_KINDS)
        if unknown or not self.kinds or not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"faults: rate in [0, 1] and kinds from {FAULT_KINDS}, got {self.rate}, {self.kinds}")


class FakeOpenAIServer:
    def __init__(self, reply: Callable[[str], str | bytes], *, latency_s: float = 0.0, slots: int | None = None,
                 faults: Faults | None = None) -> None:
        self.reply = reply
        self.latency_s = latency_s
        self.calls = 0
        self.faults = faults or Faults()
        self.faulted: Counter[str] = Counter()  # faults sent, by kind
        self.authorization: str | None = None  # the last request's Authorization header
        self._random = random.Random(self.faults.seed)
        self._slots = threading.BoundedSemaphore(slots) if slots else None
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._alive = True
        self._thawed = threading.Event()  # cleared by freeze(): requests are taken, never answered
        self._thawed.set()
        self._port = 0
        self._serve()
        self.base_url = f"http://127.0.0.1:{self._port}/v1"

    def _serve(self) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self._port), self._handler())
        self._httpd.daemon_threads = True
        self._httpd.handle_error = lambda request, client_address: None  # a client that hung up: no traceback
        self._port = self._httpd.server_address[1]
        self._up = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()

    def __enter__(self) -> "FakeOpenAIServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    def kill(self) -> None:
        """Stop: refuse new connections and cut the open ones (idempotent)."""
        with self._lock:
            alive, self._alive = self._alive, False
        if alive:
            self.down()

    def up(self) -> None:
        """Listen again, on the same port, after :meth:`down`."""
        if self._alive and not self._up:
            self._serve()

    def down(self) -> None:
        """Refuse new connections and cut the open ones, until :meth:`up`."""
        if not self._up:
            return
        self._up = False
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            connections, self._open = list(self._open), set()
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed by the client
                pass

    def freeze(self) -> None:
        """Accept connections and read requests but answer none (a hung server), until :meth:`thaw`."""
        self._thawed.clear()

    def thaw(self) -> None:
        self._thawed.set()

    def _wait_thawed(self) -> None:
        while not self._thawed.wait(0.1):
            if not (self._alive and self._up):
                return

    def _fault(self) -> str | None:
        """The fault this request gets, if any (and the request counted)."""
        with self._lock:
            self.calls += 1
            if not self.faults.rate or self._random.random() >= self.faults.rate:
                return None
            kind = self._random.choice(self.faults.kinds)
            self.faulted[kind] += 1
            return kind

    def _answer(self, body: dict[str, Any]) -> bytes:
        messages = body.get("messages") or [{"content": ""}]
        prompt = str(messages[-1].get("content", ""))
        if self._slots is not None:
            with self._slots:
                time.sleep(self.latency_s)
        elif self.latency_s:
            time.sleep(self.latency_s)
        text = self.reply(prompt)
        if isinstance(text, bytes):
            return text
        usage = {"prompt_tokens": max(1, len(prompt) // 4), "completion_tokens": max(1, len(text) // 4)}
        return json.dumps({"object": "chat.completion", "model": body.get("model", "fake"), "usage": usage,
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                        "finish_reason": "stop"}]}).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers and httpx's pool expect

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._open.add(self.connection)

            def finish(self) -> None:
                with server._lock:
                    server._open.discard(self.connection)
                super().finish()

            def do_GET(self) -> None:  # GET /v1/models: what a probe of the server asks
                server._wait_thawed()
                raw = json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode()
                try:
                    self.send_response(200 if self.path.rstrip("/").endswith("/models") else 404)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except OSError:
                    self.close_connection = True

            def do_POST(self) -> None:
                server.authorization = self.headers.get("authorization")
                server._wait_thawed()
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                fault = server._fault()
                raw = server._answer(body) if fault in (None, "drop") else b'{"error": "fault"}'
                try:
                    if fault == "close":
                        self._cut()
                        return
                    self.send_response(200 if fault in (None, "drop") else int(fault))
                    if fault == "429":
                        self.send_header("retry-after", f"{server.faults.retry_after_s:g}")
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw[:len(raw) // 2] if fault == "drop" else raw)
                    if fault == "drop":
                        self._cut()
                except OSError:  # the client gave up, or kill() cut the connection
                    self.close_connection = True

            def _cut(self) -> None:
                self.close_connection = True
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler


__all__ = ["FAULT_KINDS", "FakeOpenAIServer", "Faults"]
