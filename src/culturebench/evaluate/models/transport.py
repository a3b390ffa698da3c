"""The HTTP transports of the ``openai`` and ``azure`` backends: one POST of a JSON body to the chat-completions URL,
the reply's status, headers and body (secrets redacted), and every connection fault as ``Retryable`` (a kind and a
one-line detail) or ``UntrustedCertificate`` (said at once: a certificate does not fix itself).

``open_transport`` picks the client by the endpoint (issue #28; docs/performance.md, "HTTP clients side by side"):

- **pyreqwest** (Rust's reqwest, its I/O on threads of its own) for a plain-http endpoint reached without a proxy:
  local servers and a cluster's vLLM replicas, where the client's CPU per request sets the rate. Side by side in
  ``bench/eval_overhead.py`` (1,000 requests, 200 ms latency, two rounds), the harness on it was 0.3-3.3 points
  over the library-free floor at 256 in flight and under 1 at 64; on aiohttp 10-13 and 3-4.
- **aiohttp** for https endpoints and any endpoint behind a proxy: TLS through Python's ``ssl`` (OpenSSL) with the
  system's CA store or the one ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` name (reqwest's rustls refuses a self-signed
  certificate that is its own CA, as ``openssl req -x509`` makes them, which OpenSSL accepts once trusted), and the
  environment's proxy looked up once per run, as the ``openai`` package uses it. There a hosted API's latency, not
  the client's CPU, sets the rate.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from datetime import timedelta
from urllib.parse import urlsplit

from culturebench.errors import InputError
from culturebench.evaluate.models.redaction import redact, redact_bytes


class Retryable(Exception):
    """A passing fault: ``kind`` (timeout, refused, dns, connection, malformed, or an HTTP status) for the counts and
    the backoff, ``detail`` for the error once retries run out."""

    def __init__(self, kind: str, detail: str, retry_after: float | None = None) -> None:
        super().__init__(detail)
        self.kind, self.detail, self.retry_after = kind, detail, retry_after


class UntrustedCertificate(Exception):
    """The server's TLS certificate is not trusted (``str``: the TLS library's reason)."""


def one_line(text: object, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def open_transport(url: str, where: str, headers: Mapping[str, str], concurrency: int, timeout: float,
                   clients: dict | None = None):
    """The transport of one ``generate`` call posting to ``url`` (see the module docstring for which client);
    ``where``: the endpoint as its errors name it; ``clients``: the pyreqwest clients of earlier calls by their
    settings, to reuse (``ReqwestTransport``)."""
    if library_for(url) == "pyreqwest":
        return ReqwestTransport(url, where, headers, concurrency, timeout, clients)
    return AiohttpTransport(url, where, headers, concurrency, timeout, environment_proxy(url))


def library_for(url: str) -> str:
    """The client ``open_transport`` uses for an endpoint (run.json's ``backend.http_library``)."""
    return "pyreqwest" if url.startswith("http://") and environment_proxy(url) is None else "aiohttp"


class ReqwestTransport:
    """POSTs through pyreqwest: one client, ``concurrency`` connections, a whole-request ``timeout``.

    With ``clients`` (a dict its owner keeps, by settings) the client of earlier calls with the same settings is
    reused, with its keep-alive connections, and ``close`` leaves it open: building one costs 6 ms of CPU, 6 us a
    request of a 1,000-request batch (issue #65), and a client outlives event loops (its I/O runs on pyreqwest's own
    thread). Its connections close when the owner drops the dict."""

    def __init__(self, url: str, where: str, headers: Mapping[str, str], concurrency: int, timeout: float,
                 clients: dict | None = None) -> None:
        from pyreqwest.client import ClientBuilder

        self.url, self.where, self.timeout = url, where, timeout
        # the headers (the key among them) by their digest: the owner's dict shows no secret
        settings = (url, hashlib.sha256(repr(sorted(headers.items())).encode()).hexdigest(), concurrency, timeout)
        self.client = None if clients is None else clients.get(settings)
        self.kept = clients is not None
        if self.client is None:
            # no_proxy: reqwest would read the proxy variables itself, per request; open_transport has decided
            self.client = (ClientBuilder().no_proxy().max_connections(concurrency)
                           .timeout(timedelta(seconds=timeout)).default_headers(dict(headers)).build())
            if clients is not None:
                clients[settings] = self.client

    async def post(self, body: bytes) -> tuple[int, Mapping, bytes]:
        from pyreqwest.exceptions import ConnectError, RequestError, RequestTimeoutError

        try:
            reply = await self.client.post(self.url).body_bytes(body).build().send()
            content = redact_bytes(bytes(await reply.bytes()))
        except RequestTimeoutError:
            raise Retryable("timeout", f"no reply within {self.timeout:g} s (--timeout)") from None
        except ConnectError as exc:
            causes = [str(c.get("message", "")) for c in (getattr(exc, "details", None) or {}).get("causes", [])]
            if any("Connection refused" in c for c in causes):
                raise _refused(self.where) from None
            if any(c.startswith("dns error") for c in causes):
                raise _unknown_host(self.where) from None
            raise Retryable("connection", f"connection error: {redact(one_line(causes[-1] if causes else exc))}") from None
        except RequestError as exc:
            raise Retryable("connection", f"connection error: {redact(one_line(exc)) or type(exc).__name__}") from None
        return reply.status, reply.headers, content

    async def close(self) -> None:
        if not self.kept:  # a kept client serves the next call
            await self.client.close()


class AiohttpTransport:
    """POSTs through aiohttp: one session, ``concurrency`` connections, OpenSSL's TLS, through ``proxy`` if any."""

    def __init__(self, url: str, where: str, headers: Mapping[str, str], concurrency: int, timeout: float,
                 proxy: str | None) -> None:
        import aiohttp

        # no TLS context for plain-http endpoints (building one loads the CA store: 0.1 s of CPU per run)
        connector = aiohttp.TCPConnector(limit=concurrency, ttl_dns_cache=300,
                                         ssl=False if url.startswith("http://") else tls_context())
        self.session = aiohttp.ClientSession(connector=connector)
        self.url, self.where, self.headers, self.proxy, self.timeout = url, where, dict(headers), proxy, timeout
        self._timeout = aiohttp.ClientTimeout(total=timeout)

    async def post(self, body: bytes) -> tuple[int, Mapping, bytes]:
        import aiohttp

        try:
            async with self.session.post(self.url, data=body, headers=self.headers, timeout=self._timeout,
                                         proxy=self.proxy) as reply:
                return reply.status, reply.headers, redact_bytes(await reply.read())
        except TimeoutError:
            raise Retryable("timeout", f"no reply within {self.timeout:g} s (--timeout)") from None
        except aiohttp.ClientConnectorCertificateError as exc:
            raise UntrustedCertificate(redact(one_line(exc.certificate_error))) from None
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, ConnectionRefusedError):
                raise _refused(self.where) from None
            if isinstance(exc, getattr(aiohttp, "ClientConnectorDNSError", ())):
                raise _unknown_host(self.where) from None
            raise Retryable("connection", f"connection error: {redact(one_line(exc))}") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise Retryable("connection", f"connection error: {redact(one_line(exc)) or type(exc).__name__}") from None

    async def close(self) -> None:
        await self.session.close()


def _refused(where: str) -> Retryable:
    return Retryable("refused", f"connection refused: nothing is listening at {where}")


def _unknown_host(where: str) -> Retryable:
    return Retryable("dns", f"unknown host: {urlsplit(where).hostname!r} cannot be resolved (a typo in --base-url?)")


_TLS_CONTEXTS: dict[tuple, object] = {}


def tls_context():
    """The TLS context of https endpoints: the system's CA store, or the one ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``
    name (a company proxy's CA), as the ``openai`` package's client honours them; built once per process and
    setting (building one costs 0.1 s of CPU)."""
    import ssl

    key = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    if key not in _TLS_CONTEXTS:
        context = ssl.create_default_context()
        if key[0] or key[1]:
            try:
                context.load_verify_locations(cafile=key[0] or None, capath=key[1] or None)
            except (OSError, ssl.SSLError) as exc:
                raise InputError(f"SSL_CERT_FILE / SSL_CERT_DIR cannot be read as CA certificates ({exc})") from None
        _TLS_CONTEXTS[key] = context
    return _TLS_CONTEXTS[key]


def environment_proxy(url: str) -> str | None:
    """The proxy of the environment for ``url`` (``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``ALL_PROXY``, upper or lower
    case), None when there is none or ``NO_PROXY`` covers the host."""
    import urllib.request

    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass_environment(parts.hostname or "", proxies):
        return None
    return proxy
