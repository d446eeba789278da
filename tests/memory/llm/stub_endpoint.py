"""A tiny OpenAI-compatible endpoint on loopback, for tests only: it keeps every request
it gets, refuses the structured modes it is told to (as a real server does: a status
and a message naming the field), and answers the others with a fixed reply."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def mode_of(body: dict[str, Any]) -> str:
    """Which structured mode a chat-completions request body carries."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return "schema"
    if fmt.get("type") == "json_object":
        return "schema_object" if "schema" in fmt else "json"
    if "format" in body:
        return "ollama_format"
    return "prompt"


@dataclass
class Stub:
    """What the endpoint refuses and answers, and what it received."""

    refuse: dict[str, tuple[int, str]] = field(default_factory=dict)  # mode -> (status, text)
    reply: str = '{"n": 2}'
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    port: int = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def modes(self) -> list[str]:
        return [mode_of(body) for body in self.requests]


def _handler(stub: Stub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            stub.paths.append(self.path)
            self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})

        def do_POST(self) -> None:
            stub.paths.append(self.path)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            stub.requests.append(body)
            mode = mode_of(body)
            if mode in stub.refuse:
                status, text = stub.refuse[mode]
                kind = "invalid_request_error" if status < 500 else "server_error"
                self._send(status, {"error": {"message": text, "type": kind, "code": status}})
                return
            if body.get("stream"):
                self._stream(body)
                return
            self._send(200, {
                "id": "cmpl-1", "object": "chat.completion", "created": 0,
                "model": body.get("model", "stub"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": stub.reply}}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}})

        def _stream(self, body: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            base = {"id": "cmpl-1", "object": "chat.completion.chunk", "created": 0,
                    "model": body.get("model", "stub")}
            for word in stub.reply.split(" "):
                chunk = {**base, "choices": [{"index": 0, "finish_reason": None,
                                              "delta": {"content": word + " "}}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            done = {**base, "choices": [{"index": 0, "finish_reason": "stop", "delta": {}}]}
            self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
            self.wfile.flush()
            self.close_connection = True

    return Handler


@contextmanager
def serve(stub: Stub) -> Iterator[Stub]:
    """``stub`` listening on a free loopback port until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stub))
    stub.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


