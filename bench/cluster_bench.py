"""bin/bench --only cluster: three nodes on this machine (the tests' harness, dev.rlmmcp.e2e.cluster.ClusterMain:
each node in a network namespace of its own on a bridge, PostgreSQL and S3Proxy on the bridge, nginx with
deploy/nginx/rlm-mcp.conf), measured with a lean 2026-07-28 client (stateless JSON-RPC over HTTP/1.1 keep-alive).
The nodes are started by bin/rlm-mcp, as users start them: its JVM options and start-up cache."""
import json
import os
import socket
import statistics
import subprocess
import threading
import time
from urllib.parse import urlparse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEASE_MS = 3000  # the default --cluster-lease-ms
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def percentile(samples, p):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))]


class Unavailable(RuntimeError):
    """HTTP 503: the node did not run the call (shutting down, or the session's owner not reachable yet)."""


class Client:
    """2026-07-28 tools/call on one keep-alive socket, with Mcp-Method, Mcp-Name and Mcp-Param-Session-Id."""

    def __init__(self, url):
        u = urlparse(url)
        self.address = (u.hostname, u.port)
        self.host = f"{u.hostname}:{u.port}"
        self.sock = None
        self.ids = 0
        self.forwarded = 0  # replies relayed by a node other than the session's owner

    def _connect(self):
        self.sock = socket.create_connection(self.address, timeout=120)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = self.sock.makefile("rb")

    def tool(self, name, session=None, **arguments):
        if self.sock is None:  # first call, or nginx closed the connection after its keepalive_requests
            self._connect()
        self.ids += 1
        if session:
            arguments["session_id"] = session
        arguments["response_format"] = "json"
        body = json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments, "_meta": META}}).encode()
        head = (f"POST /mcp HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
                f"Mcp-Method: tools/call\r\nMcp-Name: {name}\r\nContent-Length: {len(body)}\r\n")
        if session:
            head += f"Mcp-Param-Session-Id: {session}\r\n"
        self.sock.sendall(head.encode() + b"\r\n" + body)
        status, data, content_type = self._read()
        if status == 503:
            raise Unavailable(data[:300])
        if status != 200:
            raise RuntimeError(f"HTTP {status}: {data[:300]!r}")
        if content_type.startswith("text/event-stream"):
            data = [line[5:] for line in data.decode().splitlines() if line.startswith("data:")][-1].encode()
        reply = json.loads(data)
        if "error" in reply or reply["result"].get("isError"):
            raise RuntimeError(str(reply)[:300])
        return json.loads(reply["result"]["content"][0]["text"])

    def _read(self):
        status = int(self.reader.readline().split()[1])
        headers = {}
        while True:
            line = self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", ""):
            data = b""
            while True:
                size = int(self.reader.readline().strip(), 16)
                if size == 0:
                    self.reader.readline()
                    break
                data += self.reader.read(size)
                self.reader.readline()
        else:
            data = self.reader.read(int(headers.get("content-length", "0")))
        if headers.get("connection", "").lower() == "close":
            self.close()
        if "rlm-forwarded-by" in headers:
            self.forwarded += 1
        return status, data, headers.get("content-type", "")

    def session(self):
        return self.tool("rlm_init_context")["session_id"]

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None


class Cluster:
    """ClusterMain as a child process, driven one command a line."""

    def __init__(self, nodes, lease_ms, *options):
        harness = os.path.join(ROOT, "target", "test-classes", "dev", "rlmmcp", "e2e", "cluster", "ClusterMain.class")
        if not os.path.exists(harness):
            subprocess.run([os.path.join(ROOT, "mvnw"), "-q", "-B", "test-compile"], cwd=ROOT, check=True)
        classpath = os.pathsep.join([os.path.join(ROOT, "target", "rlm-mcp.jar"),
                                     os.path.join(ROOT, "target", "test-classes")])
        java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if "JAVA_HOME" in os.environ else "java"
        self.proc = subprocess.Popen(
            [java, "-Ds3proxy.jar=" + os.path.join(ROOT, "target", "s3proxy", "s3proxy.jar"),
             "-Drlm.launcher=" + os.path.join(ROOT, "bin", "rlm-mcp"), "-cp", classpath,
             "dev.rlmmcp.e2e.cluster.ClusterMain", str(nodes), str(lease_ms), *options],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.urls = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the cluster harness exited before it was ready")
            if line.startswith("node "):
                self.urls.append(line.split()[2])
            if line.startswith("ready"):
                self.where = line.split()[1]
                break

    def ask(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        if answer.startswith("error"):
            raise RuntimeError(f"{command}: {answer}")
        return answer

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=180)


def interleaved(step_a, step_b, calls):
    """calls pairs, a then b; each one's latencies in ms."""
    a, b = [], []
    for _ in range(calls):
        for step, out in ((step_a, a), (step_b, b)):
            t = time.perf_counter()
            step()
            out.append((time.perf_counter() - t) * 1000)
    return a, b


def forwarded_latency(cluster, calls):
    direct, via = Client(cluster.urls[0]), Client(cluster.urls[1])
    sid = direct.session()
    assert cluster.ask(f"owner {sid}") == "0"
    interleaved(lambda: direct.tool("rlm_execute", sid, code="pass"),
                lambda: via.tool("rlm_execute", sid, code="pass"), 50)
    a, b = interleaved(lambda: direct.tool("rlm_execute", sid, code="pass"),
                       lambda: via.tool("rlm_execute", sid, code="pass"), calls)
    p50a, p50b, p90a, p90b = statistics.median(a), statistics.median(b), percentile(a, 90), percentile(b, 90)
    print(f"forwarded call (rlm_execute 'pass', sent to node 1, owner node 0) vs direct, {calls} each interleaved: "
          f"p50 {p50b:.2f} vs {p50a:.2f} ms (+{p50b - p50a:.2f}), p90 {p90b:.2f} vs {p90a:.2f} ms (+{p90b - p90a:.2f})"
          f"; owner at the end: node {cluster.ask(f'owner {sid}')}")
    direct.close()
    via.close()


def settled(cluster, sid, before, timeout=60):
    """Waits until the session's snapshot pointer has moved past before and then stayed put for a second: the
    10 MiB file is uploaded after the reply (still_writing), then the pointer set."""
    deadline, last, since = time.time() + timeout, before, time.time()
    while time.time() < deadline:
        now = cluster.ask(f"epochs {sid}")
        if now != last:
            last, since = now, time.time()
        elif now != before and time.time() - since >= 1.0:
            return
        time.sleep(0.1)
    raise RuntimeError(f"the snapshot pointer of {sid} did not settle: {last}")


def takeover(cluster, balancer, runs=3):
    times, refused = [], 0
    for _ in range(runs):
        owner = Client(cluster.urls[0])
        sid = owner.session()
        before = cluster.ask(f"epochs {sid}")
        owner.tool("rlm_execute", sid, code="blob = bytes(range(256)) * (10 << 12)\nmark = 1")
        settled(cluster, sid, before)
        owner.close()
        client = Client(balancer)
        t = time.perf_counter()
        cluster.ask("kill 0")
        while True:
            try:
                reply = client.tool("rlm_execute", sid, code="print(len(blob), mark)")
                break
            except Unavailable:  # the node said "not now" (503): the call ran nowhere; ask again
                refused += 1
                client.close()
                time.sleep(0.2)
                client = Client(balancer)
        times.append(time.perf_counter() - t)
        assert "10485760 1" in json.dumps(reply), reply
        client.close()
        cluster.ask("start 0")
    print(f"takeover after kill -9 of the owner of a 10 MiB session (lease {LEASE_MS} ms), kill to the answer "
          f"through nginx: median {statistics.median(times):.2f} s (runs: "
          f"{', '.join(f'{t:.2f}' for t in times)})"
          + (f"; {refused} answers 503 on the way, the client asking again every 0.2 s" if refused else ""))


def throughput(cluster, nodes, seconds=8, warmup=4, threads=16, sessions=16):
    """Calls/s of `threads` clients through the hashing balancer over `nodes` nodes, on sessions made through it,
    after `warmup` seconds of the same load (a node the earlier sections did not use is otherwise measured
    while its JIT compiles); and how many of the counted calls a node forwarded to the owner."""
    url = cluster.ask(f"balancer hash {','.join(str(i) for i in range(nodes))}")
    setup = Client(url)
    sids = [setup.session() for _ in range(sessions)]
    setup.close()
    counts, forwarded, errors = [0] * threads, [0] * threads, []
    start = time.time() + warmup
    stop = start + seconds

    def run(i):
        client = Client(url)
        try:
            while time.time() < stop:
                before = client.forwarded
                client.tool("rlm_execute", sids[i % sessions], code="pass")
                if time.time() >= start:
                    counts[i] += 1
                    forwarded[i] += client.forwarded - before
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(str(e))
        finally:
            client.close()
    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors, errors[:3]
    return sum(counts) / seconds, sum(forwarded), sum(counts)


def step_cost(client, sid, calls):
    """Interleaved rlm_execute of a step that changes nothing and one that changes a small variable; p50s."""
    client.tool("rlm_execute", sid, code="counter = 0")
    same, changing = interleaved(lambda: client.tool("rlm_execute", sid, code="pass"),
                                 lambda: client.tool("rlm_execute", sid, code="counter += 1"), calls)
    return statistics.median(same), statistics.median(changing)


def snapshot_cost(cluster, calls):
    client = Client(cluster.urls[0])
    cluster_same, cluster_changing = step_cost(client, client.session(), calls)
    client.close()
    single = Cluster(1, 0)
    try:
        client = Client(single.urls[0])
        single_same, single_changing = step_cost(client, client.session(), calls)
        client.close()
    finally:
        single.close()
    print(f"changing step (counter += 1) vs one that changes nothing (pass), p50 of {calls} each interleaved: "
          f"cluster (S3 upload and PostgreSQL commit before the reply) {cluster_changing:.2f} vs {cluster_same:.2f} ms "
          f"(+{cluster_changing - cluster_same:.2f}); single-node default {single_changing:.2f} vs "
          f"{single_same:.2f} ms (+{single_changing - single_same:.2f})")


def bench_cluster(calls=300):
    cluster = Cluster(3, LEASE_MS)
    try:
        where = "each in a network namespace" if cluster.where == "namespaces" else "LOOPBACK PORTS, no namespaces"
        print(f"3 nodes ({where}), PostgreSQL 15 and S3Proxy on this machine, nginx {nginx_version()}")
        throughput(cluster, 3, seconds=20, warmup=0)  # every node past its start-up compilation
        forwarded_latency(cluster, calls)
        snapshot_cost(cluster, calls)
        rates = [throughput(cluster, n) for n in (1, 2, 3)]
        print("calls/s through nginx (16 clients, 16 sessions made through it, rlm_execute 'pass', consistent "
              "hashing, each after 4 s of the same load; first, 20 s on all three nodes before every figure): "
              + ", ".join(f"{n} node{'s' if n > 1 else ''} {r:.0f} ({f} of {c} forwarded)"
                          for n, (r, f, c) in zip((1, 2, 3), rates))
              + f" (all on {os.cpu_count()} CPUs of one machine)")
        takeover(cluster, cluster.ask("balancer hash 0,1,2"))
    finally:
        cluster.close()


def nginx_version():
    out = subprocess.run(["/usr/sbin/nginx", "-v"], capture_output=True, text=True)
    return out.stderr.strip().split("/")[-1]
