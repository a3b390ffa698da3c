"""Harness overhead of the evaluation core: N requests through ``run_requests`` and a backend (``openai``, or
``ray`` with its HTTP engine) against echo servers with a fixed latency, with a fresh response cache each run.

Prints wall time against the ideal (N x latency / concurrency), the overhead in per cent, and the harness's CPU time
per request (for ``ray``: the driver's plus the endpoint actors'). Beside it, in the same run and against the same
server, bare loops that send the same request bodies and do nothing else (no cache, progress, retries or limits):
``aiohttp`` (the backend's client for https and proxies, alone), the ``openai`` package on its aiohttp transport (``DefaultAioHttpClient``,
``with_raw_response``, its retries off: issue #27's candidate to replace the hand-written client; needs
``pip install 'openai[aiohttp]'``), a minimal keep-alive HTTP/1.1 client on asyncio streams (no client library at
all), and issue #28's alternatives: aiohttp tuned (no auto headers, no decompression), aiohttp and the raw client on
uvloop's event loop, curl_cffi's ``AsyncSession`` and pyreqwest (Rust's reqwest: the backend's client for plain http, alone);
``pip install 'culturebench[bench]'`` brings the optional ones, ``--floors`` picks them, ``--no-floors`` skips them. The
servers run in separate processes (``python tests/scripted_server.py``, asyncio), so the
CPU time is the harness's own: client, retry bookkeeping, cache writes, progress bar. The machine is shared: each
setting runs ``--runs`` times and the median is reported (with the spread).

    python bench/eval_overhead.py [--requests 1000] [--latency 0.2] [--concurrency 64 256] [--backend openai|ray]
                                  [--endpoints 1] [--runs 3] [--server-url URL ...]
                                  [--floors aiohttp openai asyncio aiohttp-tuned aiohttp-uvloop asyncio-uvloop
                                   curl_cffi pyreqwest | --no-floors]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path


SCRIPTED_SERVER = Path(__file__).resolve().parents[1] / "tests" / "scripted_server.py"


@contextmanager
def server_process(latency: float, reply: str = "echo"):
    proc = subprocess.Popen([sys.executable, str(SCRIPTED_SERVER), "--latency", str(latency), "--reply", reply],
                            stdout=subprocess.PIPE, text=True)
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def make_backend(kind: str, urls: list[str], concurrency: int, replicas: int):
    if kind == "ray":
        from culturebench.evaluate.models.ray_backend import RayBackend

        # --concurrency is the total in flight: each endpoint gets its share, as a user would set it per endpoint
        return RayBackend("scripted-model", urls, concurrency=max(1, concurrency // len(urls)), replicas=replicas)
    from culturebench.evaluate.models.backends import OpenAIBackend

    return OpenAIBackend("scripted-model", base_url=urls[0], concurrency=concurrency)


def actor_cpu(backend) -> float:
    """CPU seconds of the ray backend's endpoint actors so far (0 for other backends)."""
    actors = getattr(backend, "_actors", None)
    if not actors:
        return 0.0
    import ray

    return sum(ray.get([actor.cpu_seconds.remote() for _, actor in actors]))


def one_run(backend, requests, concurrency: int) -> tuple[float, float]:
    """(wall seconds, harness CPU seconds) of one fresh run, and a check that a second run comes from the cache."""
    from culturebench.evaluate.runs.cache import ResponseCache
    from culturebench.evaluate.runs.runner import run_requests

    with tempfile.TemporaryDirectory() as tmp, ResponseCache(Path(tmp) / "cache.sqlite") as cache:
        actors0 = actor_cpu(backend)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        result = run_requests(backend, requests, cache, description="bench")
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0 + actor_cpu(backend) - actors0
        again = run_requests(backend, requests, cache, description="bench (cached)")
    assert result.stats.n_queried == len(requests) and again.stats.n_queried == 0
    assert all(r.text for r in result.responses) and result.stats.retries == 0
    return wall, cpu


FLOOR_LABELS = {"aiohttp": "bare aiohttp loop", "openai": "bare openai package loop (aiohttp transport, raw)",
                "asyncio": "raw HTTP/1.1 on asyncio streams",
                "aiohttp-tuned": "bare aiohttp loop, tuned (no auto headers, no decompression, no cleanup timers)",
                "aiohttp-uvloop": "bare aiohttp loop on uvloop", "asyncio-uvloop": "raw HTTP/1.1 on uvloop streams",
                "curl_cffi": "bare curl_cffi AsyncSession loop", "pyreqwest": "bare pyreqwest (Rust reqwest) loop"}
FLOOR_MODULES = {"openai": "openai", "aiohttp-uvloop": "uvloop", "asyncio-uvloop": "uvloop", "curl_cffi": "curl_cffi",
                 "pyreqwest": "pyreqwest"}
"""The package each optional floor needs (``pip install 'culturebench[bench]'`` brings them all)."""


def floor_run(url: str, bodies: list[bytes], concurrency: int, client: str) -> tuple[float, float]:
    """(wall s, CPU s) of sending ``bodies`` with ``concurrency`` in flight by a ``client`` that does nothing else:
    "aiohttp" (one session, as the openai backend opens it), "openai" (the ``openai`` package's ``AsyncOpenAI`` on
    its aiohttp transport, ``DefaultAioHttpClient``, with ``with_raw_response`` and its own retries off: issue #27's
    candidate to replace the hand-written client) or "asyncio" (one keep-alive HTTP/1.1 connection per slot on
    asyncio streams, reading Content-Length bodies)."""
    import asyncio
    import json
    from urllib.parse import urlsplit

    import aiohttp

    async def run() -> None:
        pending = iter(bodies)
        target = urlsplit(f"{url}/chat/completions")
        if client.startswith("aiohttp"):
            tuned = client == "aiohttp-tuned"
            tuning = {"enable_cleanup_closed": False, "ttl_dns_cache": None} if tuned else {}
            options = ({"auto_decompress": False, "skip_auto_headers": ("User-Agent", "Accept-Encoding")}
                       if tuned else {})
            connector = aiohttp.TCPConnector(limit=concurrency, ssl=False, **tuning)
            async with aiohttp.ClientSession(connector=connector, **options) as session:
                async def slot() -> None:
                    for body in pending:
                        async with session.post(target.geturl(), data=body,
                                                headers={"Content-Type": "application/json"}) as reply:
                            json.loads(await reply.read())
                await asyncio.gather(*(slot() for _ in range(concurrency)))
            return
        if client == "curl_cffi":
            from curl_cffi.requests import AsyncSession

            async with AsyncSession(max_clients=concurrency) as session:
                async def slot() -> None:
                    for body in pending:
                        reply = await session.post(target.geturl(), data=body,
                                                   headers={"Content-Type": "application/json"})
                        json.loads(reply.content)
                await asyncio.gather(*(slot() for _ in range(concurrency)))
            return
        if client == "pyreqwest":
            from pyreqwest.client import ClientBuilder

            async with ClientBuilder().max_connections(concurrency).build() as session:
                async def slot() -> None:
                    for body in pending:
                        reply = await (session.post(target.geturl()).header("Content-Type", "application/json")
                                       .body_bytes(body).build().send())
                        json.loads(bytes(await reply.bytes()))
                await asyncio.gather(*(slot() for _ in range(concurrency)))
            return
        if client == "openai":
            from openai import AsyncOpenAI, DefaultAioHttpClient

            parsed = [json.loads(body) for body in bodies]  # the package takes keyword arguments, not bytes
            pending = iter(parsed)
            async with AsyncOpenAI(api_key="EMPTY", base_url=url, max_retries=0,
                                   http_client=DefaultAioHttpClient()) as openai_client:
                async def slot() -> None:
                    for kwargs in pending:
                        reply = await openai_client.chat.completions.with_raw_response.create(**kwargs)
                        json.loads(reply.content)
                await asyncio.gather(*(slot() for _ in range(concurrency)))
            return

        async def slot() -> None:
            reader, writer = await asyncio.open_connection(target.hostname, target.port)
            for body in pending:
                writer.write(f"POST {target.path} HTTP/1.1\r\nHost: {target.netloc}\r\n"
                             f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
                head = (await reader.readuntil(b"\r\n\r\n")).lower()
                length = int(head.split(b"content-length:")[1].split(b"\r\n")[0])
                json.loads(await reader.readexactly(length))
            writer.close()
        await asyncio.gather(*(slot() for _ in range(concurrency)))

    cpu0, wall0 = time.process_time(), time.perf_counter()
    if client.endswith("-uvloop"):
        import uvloop

        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(run())
    else:
        asyncio.run(run())
    return time.perf_counter() - wall0, time.process_time() - cpu0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--backend", choices=("openai", "ray"), default="openai")
    parser.add_argument("--endpoints", type=int, default=1, help="echo servers to start (ray: fanned out over them)")
    parser.add_argument("--replicas", type=int, default=1, help="ray: client actors per endpoint")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--server-url", action="append", help="use running servers instead of starting them")
    parser.add_argument("--no-floors", action="store_true", help="skip the bare-client loops")
    parser.add_argument("--floors", nargs="+", choices=tuple(FLOOR_LABELS),
                        default=[c for c in FLOOR_LABELS
                                 if c not in FLOOR_MODULES or importlib.util.find_spec(FLOOR_MODULES[c])],
                        help="which bare-client loops to run beside the harness (default: those installed)")
    args = parser.parse_args()

    t0 = time.perf_counter()
    from culturebench.chat import ChatRequest, SamplingParams

    import_s = time.perf_counter() - t0
    requests = [ChatRequest(messages=(("system", "Answer with one number."), ("user", f"Question {i}: how much?")),
                            sampling=SamplingParams(temperature=0.0, max_tokens=8)) for i in range(args.requests)]
    with ExitStack() as stack:
        urls = args.server_url or [stack.enter_context(server_process(args.latency)) for _ in range(args.endpoints)]
        print(f"backend {args.backend}, {len(urls)} endpoint(s), requests {args.requests}, latency "
              f"{args.latency * 1000:.0f} ms, median of {args.runs} runs; imports {import_s:.2f} s")
        for concurrency in args.concurrency:
            backend = make_backend(args.backend, urls, concurrency, args.replicas)
            if args.backend == "ray":
                backend.connect()
                one_run(backend, requests[:concurrency], concurrency)  # start the actors: a one-off cost
            runs = [one_run(backend, requests, concurrency) for _ in range(args.runs)]
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            ideal = args.requests * args.latency / concurrency
            waves = math.ceil(args.requests / concurrency) * args.latency  # the floor when all start together
            spread = ", ".join(f"{(w / ideal - 1) * 100:.1f}%" for w, _ in runs)
            print(f"concurrency {concurrency}: wall {wall:.3f} s vs ideal {ideal:.3f} s: overhead "
                  f"{(wall / ideal - 1) * 100:.1f}% (runs: {spread}; {(wall / waves - 1) * 100:.1f}% over the "
                  f"{waves:.3f} s of ceil(N/concurrency) full waves); harness CPU {cpu / args.requests * 1000:.3f} "
                  f"ms per request; {args.requests / wall:.0f} requests/s")
            if hasattr(backend, "close"):
                backend.close()
            if not args.no_floors:
                from culturebench.evaluate.models.backends import OpenAIBackend

                bodies = [OpenAIBackend("scripted-model", base_url=urls[0])._request_body(r) for r in requests]
                for client in args.floors:
                    floor = [floor_run(urls[0], bodies, concurrency, client) for _ in range(args.runs)]
                    floor_wall = statistics.median(w for w, _ in floor)
                    floor_cpu = statistics.median(c for _, c in floor)
                    label = FLOOR_LABELS[client]
                    print(f"  floor, {label}"
                          f" (one endpoint): wall {floor_wall:.3f} s: {(floor_wall / ideal - 1) * 100:.1f}% over the "
                          f"ideal; CPU {floor_cpu / args.requests * 1000:.3f} ms per request; the harness takes "
                          f"{(wall - floor_wall) * 1000:+.0f} ms ({(wall / floor_wall - 1) * 100:+.1f}%) more")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
