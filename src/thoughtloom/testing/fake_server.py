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

:meth:`FakeOpenAIServer.kill` makes it go away mid-run: the listening socket
closes (later connections are refused) and open connections are cut.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


class FakeOpenAIServer:
    def __init__(self, reply: Callable[[str], str | bytes], *, latency_s: float = 0.0, slots: int | None = None) -> None:
        self.reply = reply
        self.latency_s = latency_s
        self.calls = 0
        self.authorization: str | None = None  # the last request's Authorization header
        self._slots = threading.BoundedSemaphore(slots) if slots else None
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._alive = True
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> "FakeOpenAIServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    def kill(self) -> None:
        """Stop: refuse new connections and cut the open ones (idempotent)."""
        with self._lock:
            alive, self._alive = self._alive, False
        if not alive:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            connections, self._open = list(self._open), set()
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed by the client
                pass

    def _answer(self, body: dict[str, Any]) -> bytes:
        with self._lock:
            self.calls += 1
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

            def do_POST(self) -> None:
                server.authorization = self.headers.get("authorization")
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                raw = server._answer(body)
                try:
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except OSError:  # the client gave up, or kill() cut the connection
                    self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler


__all__ = ["FakeOpenAIServer"]
