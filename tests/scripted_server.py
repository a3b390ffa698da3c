"""A small OpenAI-compatible chat server that answers from a script, for tests and benchmarks.

Standard library only: a ``ThreadingHTTPServer`` in a background thread on 127.0.0.1 (a free port).

- ``POST /v1/chat/completions``: the reply comes from ``reply`` applied to the last user message: a string (the
  same reply to everything), a callable ``(last_user_message, body) -> str``, or a dict whose keys are exact
  messages or compiled regular expressions (searched in order); no match answers 400. ``n`` choices are returned
  when asked (``reply`` called once per choice for callables). ``usage`` counts whitespace-separated words.
- ``logprobs``: ``callable(last_user_message, body, reply) -> [{token: logprob, ...}, ...]`` (one dict per generated
  position, its first key the token generated there) answers requests that ask for ``logprobs``: each choice gets
  ``logprobs.content`` in OpenAI's format, with the ``top_logprobs`` most probable alternatives of each position.
  Without it (the default), ``logprobs`` is null, as from a server that does not return them.
- ``GET /v1/models``: the model.
- ``tls``: a server-side ``ssl.SSLContext``: serve https (a self-signed certificate, for TLS faults).
- ``latency``: seconds every answer waits (a number or ``callable(body) -> float``).
- ``parallel``: how many requests are worked on at once (the others queue, as on llama.cpp's server, which answers
  one at a time); a request whose client gave up is still worked on. Default: all at once.
- ``faults``: consumed one per chat request, in order (then normal answers), or a callable
  ``(request_number, body) -> fault or None``. A fault is ``None``/``"ok"`` (normal answer), an HTTP status
  (``429``, ``500``, ``404``...), ``(status, {"Retry-After": "1"})``, ``"slow"`` (waits ``slow_seconds``, then
  answers normally: beyond a client's timeout), ``"malformed"`` (200 with a non-JSON body), ``"no_choices"``
  (200 JSON without ``choices``), ``"disconnect"`` (closes the connection without answering), ``"error_body"``
  (200 whose body is an error object), ``"not_utf8"`` (200 with a Latin-1 body), ``"bad_usage"`` (a good answer
  with a malformed ``usage``), ``"length"`` (the answer cut off: ``finish_reason`` "length"), ``"echo_key"`` (401
  whose message repeats every request header as received, key included, as some servers do).
- ``reasoning``: behave like a reasoning model of OpenAI's API (o-series, gpt-5): 400 with OpenAI's own error body
  for ``max_tokens`` (use ``max_completion_tokens``), ``stop`` and ``top_p`` ("unsupported_parameter") and a
  ``temperature`` other than 1 ("unsupported_value").
- Azure's route ``POST /openai/deployments/{deployment}/chat/completions?api-version=...`` answers like the OpenAI
  one (without ``api-version``: 404, as Azure); ``deployments`` lists the deployments it knows (the model name).
- As a forward proxy (``GET``/``POST`` of an absolute ``http://`` URL): ``proxied`` counts such requests, which are
  answered as if they had come directly.

It counts chat requests, records their bodies and headers (names lower-cased), and tracks the most requests in
flight at once::

    with ScriptedServer(reply=lambda text, body: text.upper(), latency=0.2) as server:
        OpenAIBackend("scripted", base_url=server.base_url)

``python tests/scripted_server.py --latency 0.2`` runs an echo server in the foreground
(``serve_echo``: asyncio, so that the server is not what limits ``bench/eval_overhead.py`` at 256 in flight) and
prints its base URL on the first line (the benchmark keeps it out of the measured process).
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

_PHRASES = {s.value for s in HTTPStatus}
Reply = str | Callable[[str, dict], str] | Mapping[Any, str]
Fault = int | str | tuple | None


def echo(text: str, body: dict) -> str:
    """The default script: repeat the last user message."""
    return f"echo: {text}"


def digit(text: str, body: dict) -> str:
    """A number 1-4 that depends on the last user message only (crc32): a model whose answers parse and vary, so
    that a benchmark's scoring has something to score (``bench/eval_scale.py``)."""
    import zlib

    return str(zlib.crc32(text.encode("utf-8")) % 4 + 1)


def last_user_message(body: dict) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
            return str(content)
    return ""


def count_words(text: str) -> int:
    return len(text.split())


class _NoScriptedReply(Exception):
    pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True

    def __init__(self, address, handler, scripted: ScriptedServer) -> None:
        self.scripted = scripted
        super().__init__(address, handler)

    def handle_error(self, request, client_address) -> None:  # a client that gave up (timeout) is expected
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client's connection pool reuses connections
    disable_nagle_algorithm = True  # TCP_NODELAY: no 40 ms delayed-ACK stalls between small writes
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, payload: bytes, content_type: str = "application/json",
              headers: Mapping[str, str] | None = None) -> None:
        # Status line, headers and body in one write (with TCP_NODELAY: no delayed-ACK stalls between writes).
        lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase if status in _PHRASES else 'Error'}",
                 f"Content-Type: {content_type}", f"Content-Length: {len(payload)}",
                 *(f"{key}: {value}" for key, value in (headers or {}).items()), "", ""]
        self.wfile.write("\r\n".join(lines).encode("latin-1") + payload)

    def _send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers=headers)

    def _error(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
                429: "rate_limit_error"}.get(status, "server_error")
        self._send_json(status, {"error": {"message": message, "type": kind, "code": None, "param": None}},
                        headers=headers)

    def do_GET(self) -> None:
        scripted = self.server.scripted
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": [
                {"id": scripted.model, "object": "model", "created": 0, "owned_by": "culturebench"}]})
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        scripted = self.server.scripted
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path
        if path.startswith("http://"):  # a request for a proxy: absolute URL
            with scripted._lock:
                scripted.proxied += 1
            path = urlsplit(path)._replace(scheme="", netloc="").geturl()
        route, _, query = path.partition("?")
        azure = re.fullmatch(r"/openai/deployments/([^/]+)/chat/completions/?", route)
        if azure:
            if "api-version=" not in query:
                self._error(404, "Resource not found")
                return
        elif route.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._error(404, f"no route {self.path}")
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._error(400, "request body is not JSON")
            return
        _, fault = scripted._arrive(body, {k.lower(): v for k, v in self.headers.items()}, self.client_address[1])
        try:
            if scripted.workers is None:
                self._answer(scripted, body, fault)
            else:
                with scripted.workers:
                    self._answer(scripted, body, fault)
        finally:
            scripted._leave()

    def _answer(self, scripted: ScriptedServer, body: dict, fault: Fault) -> None:
        delay = scripted.latency(body) if callable(scripted.latency) else scripted.latency
        if fault == "slow":
            delay = max(delay, scripted.slow_seconds)
        if delay > 0:
            time.sleep(delay)
        if fault == "echo_key":
            received = "; ".join(f"{k}: {v}" for k, v in self.headers.items())
            self._error(401, f"Incorrect API key provided. Request headers: {received}")
            return
        if scripted.reasoning and self._reasoning_refusal(body):
            return
        if fault in (None, "ok", "slow", "bad_usage", "length"):
            pass
        elif fault == "error_body":
            self._send_json(200, {"error": {"message": "The upstream provider refused the request: context too "
                                            "long", "code": 400}})
            return
        elif fault == "not_utf8":
            self._send(200, '{"choices": [{"message": {"content": "caf\u00e9"}}]}'.encode("latin-1"))
            return
        elif fault == "malformed":
            self._send(200, b"<html>upstream proxy error</html>", content_type="application/json")
            return
        elif fault == "no_choices":
            self._send_json(200, {"id": "chatcmpl-x", "object": "chat.completion", "created": 0,
                                  "model": scripted.model})
            return
        elif fault == "disconnect":
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
            return
        elif isinstance(fault, int):
            self._error(fault, f"scripted fault {fault}")
            return
        elif isinstance(fault, tuple):
            status, headers = fault
            self._error(int(status), f"scripted fault {status}", headers=headers)
            return
        else:
            raise ValueError(f"unknown scripted fault {fault!r}")
        if body.get("model") not in (None, scripted.model) and scripted.strict_model:
            self._error(404, f"The model `{body.get('model')}` does not exist")
            return
        text = last_user_message(body)
        n = int(body.get("n") or 1)
        try:
            replies = [scripted._reply(text, body) for _ in range(n)]
        except _NoScriptedReply:
            self._error(400, f"no scripted reply for {text[:80]!r}")
            return
        prompt_tokens = sum(count_words(str(m.get("content", ""))) for m in body.get("messages") or [])
        if fault == "length":  # cut off after one word
            replies = [" ".join(r.split()[:1]) for r in replies]
        completion_tokens = sum(count_words(r) for r in replies)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
        if fault == "bad_usage":
            usage = {"prompt_tokens": "many", "completion_tokens": -3, "total_tokens": None}
        self._send_json(200, {
            "id": f"chatcmpl-{scripted.request_count}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": scripted.model,
            "choices": [{"index": i, "message": {"role": "assistant", "content": r},
                         "finish_reason": "length" if fault == "length" else "stop",
                         "logprobs": scripted._logprobs(text, body, r)} for i, r in enumerate(replies)],
            "usage": usage,
        })

    def _reasoning_refusal(self, body: dict) -> bool:
        """OpenAI's reply to a reasoning model's unsupported parameters (its error bodies, word for word)."""
        for name in ("max_tokens", "stop", "top_p"):
            if name in body:
                advice = " Use 'max_completion_tokens' instead." if name == "max_tokens" else ""
                self._send_json(400, {"error": {
                    "message": f"Unsupported parameter: '{name}' is not supported with this model.{advice}",
                    "type": "invalid_request_error", "param": name, "code": "unsupported_parameter"}})
                return True
        if body.get("temperature", 1) != 1:
            self._send_json(400, {"error": {
                "message": f"Unsupported value: 'temperature' does not support {body['temperature']} with this "
                           "model. Only the default (1) value is supported.",
                "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}})
            return True
        return False


class ScriptedServer:
    """An OpenAI-compatible server answering from a script; use as a context manager (see the module doc)."""

    def __init__(self, reply: Reply = echo, *, latency: float | Callable[[dict], float] = 0.0,
                 faults: Iterable[Fault] | Callable[[int, dict], Fault] | None = None, slow_seconds: float = 5.0,
                 model: str = "scripted-model", strict_model: bool = False, host: str = "127.0.0.1",
                 port: int = 0, parallel: int | None = None, reasoning: bool = False, tls=None,
                 logprobs: Callable[[str, dict, str], list[dict[str, float]]] | None = None) -> None:
        self.reply = reply
        self.logprobs = logprobs
        self.reasoning = reasoning
        self.tls = tls  # an ssl.SSLContext (server side): serve https
        self.proxied = 0
        self.latency = latency
        self.slow_seconds = slow_seconds
        self.model = model
        self.strict_model = strict_model
        self.workers = None if parallel is None else threading.Semaphore(parallel)
        self._fault_fn = faults if callable(faults) else None
        self._faults = [] if faults is None or callable(faults) else list(faults)
        self._lock = threading.Lock()
        self.request_count = 0
        self.bodies: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.client_ports: list[int] = []  # the client's port of each request: one per connection it opened
        self.in_flight = 0
        self.max_in_flight = 0
        self._host, self._port = host, port
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---
    def start(self) -> ScriptedServer:
        self._httpd = _Server((self._host, self._port), _Handler, self)
        if self.tls is not None:
            self._httpd.socket = self.tls.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="scripted-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls is not None else 'http'}://127.0.0.1:{self.port}/v1"

    # --- bookkeeping (called from handler threads) ---
    def reset_counts(self) -> None:
        with self._lock:
            self.request_count = 0
            self.bodies.clear()
            self.headers.clear()
            self.client_ports.clear()
            self.max_in_flight = self.in_flight

    def add_faults(self, faults: Iterable[Fault]) -> None:
        with self._lock:
            self._faults.extend(faults)

    def _arrive(self, body: dict, headers: dict[str, str], client_port: int) -> tuple[int, Fault]:
        with self._lock:
            self.request_count += 1
            number = self.request_count
            self.bodies.append(body)
            self.headers.append(headers)
            self.client_ports.append(client_port)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            fault = self._faults.pop(0) if self._faults else None
        if self._fault_fn is not None:
            fault = self._fault_fn(number, body)
        return number, fault

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _logprobs(self, text: str, body: dict, reply: str) -> dict | None:
        """A choice's ``logprobs`` (OpenAI's chat format) when the request asks for them and a script gives them."""
        if self.logprobs is None or not body.get("logprobs"):
            return None
        top = int(body.get("top_logprobs") or 0)
        content = []
        for position in self.logprobs(text, body, reply):
            token, logprob = next(iter(position.items()))
            ranked = sorted(position.items(),  # a value that is not a number (a malformed reply's) ranks last
                            key=lambda item: -item[1] if isinstance(item[1], (int, float)) else math.inf)[:top]
            content.append({"token": token, "logprob": logprob, "bytes": list(token.encode()),
                            "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())}
                                             for t, lp in ranked]})
        return {"content": content}

    def _reply(self, text: str, body: dict) -> str:
        reply = self.reply
        if isinstance(reply, str):
            return reply
        if callable(reply):
            return reply(text, body)
        if text in reply:
            return reply[text]
        for key, value in reply.items():
            if isinstance(key, re.Pattern) and key.search(text):
                return value
        raise _NoScriptedReply(text)


async def serve_echo(latency: float, port: int = 0, model: str = "scripted-model", ready=None,
                     reply: Callable[[str, dict], str] = echo) -> None:
    """The benchmark's server: ``reply`` (``echo`` or ``digit``) after ``latency`` seconds, on ``aiohttp.web``
    (asyncio: thousands of requests in flight on one core, where the threaded server above spends a thread per
    connection); calls ``ready(base_url)`` once listening, then serves until cancelled."""
    import asyncio

    from aiohttp import web

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        await asyncio.sleep(latency)
        text = reply(last_user_message(body), body)
        prompt_tokens = sum(count_words(str(m.get("content", ""))) for m in body.get("messages") or [])
        return web.json_response({
            "id": "chatcmpl-echo", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop",
                         "logprobs": None}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": count_words(text),
                      "total_tokens": prompt_tokens + count_words(text)}})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port, backlog=4096)
    await site.start()
    bound = site._server.sockets[0].getsockname()[1]
    if ready is not None:
        ready(f"http://127.0.0.1:{bound}/v1")
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    import argparse
    import asyncio

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model", default="scripted-model")
    parser.add_argument("--reply", choices=("echo", "digit"), default="echo",
                        help="echo the prompt, or answer a number 1-4 drawn from it")
    args = parser.parse_args(argv)
    try:
        asyncio.run(serve_echo(args.latency, args.port, args.model, ready=lambda url: print(url, flush=True),
                               reply={"echo": echo, "digit": digit}[args.reply]))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
