"""Load test of the admission webhook over loopback HTTPS: p50/p99 latency and reviews/s.

    python bench/admission.py                     # the `kubelint-ml serve` stack, 1, 8 and 32 clients
    python bench/admission.py --stack all         # also the other server stacks compared in the README
    python bench/admission.py --seconds 5 --clients 8
    python bench/admission.py --config fixtures/policies/bench.yaml   # with Rego and Gatekeeper policies
    python bench/admission.py --large 18000       # one 1.5 MB Pod of 18,000 GPU containers, one client

Each run starts the server as its own process on 127.0.0.1 (a free port, a
self-signed certificate made with the openssl CLI), then one client process
opens N keep-alive HTTPS connections (asyncio) and sends AdmissionReviews
built from the corpus objects that have pod templates (in turn) for a bounded
time, after a warm-up. Latency is from writing a request to reading its whole
answer. The server's CPU time per review (from /proc) is printed too: unlike
latency and throughput it hardly depends on what else the machine runs. The
machine's load average is printed next to the table: on a shared machine the
other numbers move with it.

Stacks: ``serve`` (``kubelint-ml serve`` itself: uvicorn with httptools and
uvloop, its connection time limits, the reload watcher, the JSON log),
``uvicorn`` (the same server library with its own protocol classes),
``uvicorn-h11`` (pure Python HTTP parser and asyncio loop), ``hypercorn``
(asyncio). All serve the same ASGI application (kubelint_ml.admission.app).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
STACKS = ("serve", "uvicorn", "uvicorn-h11", "hypercorn")

# The server side of a stack: the ASGI app over the given server library.
SERVER = r"""
import asyncio, sys
from kubelint_ml.admission.app import Holder, WebhookApp
from kubelint_ml.admission.metrics import Metrics
from kubelint_ml.admission.review import load_policy, warm_up
from kubelint_ml.admission.server import setup_logging
stack, host, port, cert, key, config = sys.argv[1:7]
setup_logging()  # one JSON line per review, as `serve` writes (to a file here)
policy = load_policy(config or None)
warm_up(policy)
app = WebhookApp(Holder(policy), Metrics())
if stack.startswith("uvicorn"):
    import uvicorn
    extra = {"http": "h11", "loop": "asyncio"} if stack == "uvicorn-h11" else {}
    uvicorn.run(app, host=host, port=int(port), ssl_certfile=cert, ssl_keyfile=key, access_log=False,
                log_config=None, lifespan="on", **extra)
else:
    from hypercorn.asyncio import serve
    from hypercorn.config import Config
    c = Config()
    c.bind = [f"{host}:{port}"]
    c.certfile, c.keyfile = cert, key
    c.accesslog = None
    asyncio.run(serve(app, c))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_cert(directory: str) -> tuple[str, str]:
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            key,
            "-out",
            cert,
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def large_body(containers: int) -> bytes:
    """The AdmissionReview of one Pod the rules deny (GPU containers with no memory limit), made large:
    18,000 containers are 1.5 MB, under the API server's request size limit."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big", "namespace": "bench"},
        "spec": {
            "containers": [
                {"name": f"c{i}", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
                for i in range(containers)
            ]
        },
    }
    req = {
        "uid": "bench-large",
        "operation": "CREATE",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "namespace": "bench",
        "object": pod,
    }
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}).encode()


def review_bodies(limit: int = 200) -> list[bytes]:
    """AdmissionReviews of corpus objects that have pod templates."""
    sys.path.insert(0, str(ROOT))
    import yaml

    from kubelint_ml.input.objects import K8sObject, make_ref
    from kubelint_ml.input.workloads import pod_templates

    out: list[bytes] = []
    for path in sorted(CORPUS.rglob("*.yaml")):
        try:
            docs = list(yaml.safe_load_all(path.read_bytes()))
        except yaml.YAMLError:
            continue
        for doc in docs:
            if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str):
                continue
            obj = K8sObject(doc, doc, (), make_ref(doc), str(path), 0)
            try:
                if not pod_templates(obj):
                    continue
            except Exception:  # noqa: BLE001 - odd shapes are not load-test material
                continue
            api = str(doc.get("apiVersion", ""))
            group, _, version = api.rpartition("/")
            req = {
                "uid": f"bench-{len(out)}",
                "operation": "CREATE",
                "kind": {"group": group, "version": version, "kind": doc["kind"]},
                "namespace": "bench",
                "object": doc,
            }
            out.append(
                json.dumps(
                    {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}, default=str
                ).encode()
            )
            if len(out) >= limit:
                return out
    return out


async def _client(
    host: str,
    port: int,
    bodies: list[bytes],
    start_at: int,
    until: float,
    warm_until: float,
    lat: list[float],
    ctx: ssl.SSLContext,
) -> int:
    reader, writer = await asyncio.open_connection(host, port, ssl=ctx)
    i = start_at
    done = 0
    try:
        while True:
            now = time.perf_counter()
            if now >= until:
                break
            body = bodies[i % len(bodies)]
            i += 1
            head = (
                f"POST /validate HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            ).encode()
            t0 = time.perf_counter()
            writer.write(head + body)
            status = await reader.readline()
            if not status:  # the server closed the connection (hypercorn does after 1000 requests): reconnect
                writer.close()
                reader, writer = await asyncio.open_connection(host, port, ssl=ctx)
                t0 = time.perf_counter()
                writer.write(head + body)
                status = await reader.readline()
            length = 0
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            await reader.readexactly(length)
            t1 = time.perf_counter()
            if not status.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(f"answer {status!r}")
            if t0 >= warm_until:
                lat.append(t1 - t0)
                done += 1
    finally:
        writer.close()
    return done


async def _load(host: str, port: int, bodies: list[bytes], clients: int, seconds: float, warm: float) -> dict:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    lat: list[float] = []
    start = time.perf_counter()
    warm_until = start + warm
    until = warm_until + seconds
    counts = await asyncio.gather(
        *[_client(host, port, bodies, k * 7, until, warm_until, lat, ctx) for k in range(clients)]
    )
    lat.sort()
    n = len(lat)
    return {
        "clients": clients,
        "reviews": n,
        "per_second": round(sum(counts) / seconds, 1),
        "p50_ms": round(lat[n // 2] * 1000, 2) if n else None,
        "p99_ms": round(lat[min(n - 1, int(n * 0.99))] * 1000, 2) if n else None,
        "mean_ms": round(statistics.fmean(lat) * 1000, 2) if n else None,
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc), 0 where unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def wait_ready(host: str, port: int, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


def run_stack(
    stack: str,
    cert: str,
    key: str,
    bodies: list[bytes],
    clients: list[int],
    seconds: float,
    warm: float,
    config: str = "",
) -> list[dict]:
    host, port = "127.0.0.1", free_port()
    python = sys.executable
    log = open(os.path.join(os.path.dirname(cert), f"{stack}.log"), "w+b")  # noqa: SIM115 - closed in finally
    if stack == "serve":
        command = [python, "-m", "kubelint_ml", "serve", "--cert", cert, "--key", key, "--host", host]
        command += ["--port", str(port)] + (["--config", config] if config else [])
    else:
        command = [python, "-c", SERVER, stack, host, str(port), cert, key, config]
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        wait_ready(host, port, proc)
        rows = []
        for n in clients:
            cpu0 = cpu_seconds(proc.pid)
            row = asyncio.run(_load(host, port, bodies, n, seconds, warm))
            answered = row["per_second"] * (seconds + warm)  # the warm-up's reviews used CPU too
            row["server_cpu_ms"] = round((cpu_seconds(proc.pid) - cpu0) * 1000 / answered, 2) if answered else None
            row["stack"] = stack
            rows.append(row)
            print(
                f"  {stack:12} {n:3} clients: p50 {row['p50_ms']} ms, p99 {row['p99_ms']} ms, "
                f"{row['per_second']} reviews/s, server CPU {row['server_cpu_ms']} ms/review",
                flush=True,
            )
        return rows
    except Exception:
        proc.terminate()
        proc.wait(10)
        log.seek(0)
        print(log.read().decode(errors="replace")[-3000:], file=sys.stderr)
        raise
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stack", choices=STACKS + ("all",), default="serve")
    ap.add_argument("--clients", type=int, action="append", help="concurrent clients (repeatable) [1, 8, 32]")
    ap.add_argument("--seconds", type=float, default=5.0, help="measured seconds per point (at most 60)")
    ap.add_argument("--warm", type=float, default=1.0, help="unmeasured seconds before each point")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--config", default="", help="the server's .kubelint-ml.yaml [default: none, the defaults]")
    ap.add_argument("--large", type=int, default=0, help="instead: one Pod of this many containers [1 client]")
    args = ap.parse_args()
    seconds = min(args.seconds, 60.0)
    clients = args.clients or ([1] if args.large else [1, 8, 32])
    bodies = [large_body(args.large)] if args.large else review_bodies()
    sizes = sorted(len(b) for b in bodies)
    print(
        f"{len(bodies)} AdmissionReviews from {'a large Pod' if args.large else CORPUS} "
        f"(median {sizes[len(sizes) // 2]} bytes); "
        f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs",
        flush=True,
    )
    stacks = STACKS if args.stack == "all" else (args.stack,)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = make_cert(tmp)
        for stack in stacks:
            rows += run_stack(
                stack,
                cert,
                key,
                bodies,
                clients,
                seconds,
                args.warm,
                os.path.abspath(args.config) if args.config else "",
            )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print("\n| stack | clients | p50 ms | p99 ms | reviews/s | server CPU ms/review |\n|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['stack']} | {r['clients']} | {r['p50_ms']} | {r['p99_ms']} | {r['per_second']} "
            f"| {r['server_cpu_ms']} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
