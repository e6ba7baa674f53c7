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


class NodeCpu:
    """Holds each node, its JVM and its kernels, to `share` of one CPU with a cgroup of its own (cgroup v1's cpu
    controller or v2's cpu.max), as a machine of its own would hold it: on one machine the nodes otherwise share
    the same CPUs, and a node added adds no CPU. Moves them back and removes the cgroups on exit; `groups` is empty
    where cgroups cannot be written here (not root, no cpu controller)."""

    PERIOD_US = 100_000

    def __init__(self, urls, share):
        self.share = share
        self.groups = []
        v1 = "/sys/fs/cgroup/cpu"
        self.v1 = os.path.exists(os.path.join(v1, "cpu.cfs_quota_us"))
        self.root = v1 if self.v1 else "/sys/fs/cgroup"
        self.nodes = [node_pid(url) for url in urls]

    def __enter__(self):
        import bench  # run as bin/bench, bench.py is __main__: this loads its definitions only
        if not self.v1 and "cpu" not in _read(os.path.join(self.root, "cgroup.subtree_control")).split():
            return self
        try:
            for i, pid in enumerate(self.nodes):
                group = os.path.join(self.root, f"rlm-bench-node-{os.getpid()}-{i}")
                os.makedirs(group, exist_ok=True)
                self.groups.append(group)
                quota = int(self.PERIOD_US * self.share)
                if self.v1:
                    _write(os.path.join(group, "cpu.cfs_period_us"), self.PERIOD_US)
                    _write(os.path.join(group, "cpu.cfs_quota_us"), quota)
                else:
                    _write(os.path.join(group, "cpu.max"), f"{quota} {self.PERIOD_US}")
                for member in [pid, *bench.descendants(pid)]:
                    _write(os.path.join(group, "cgroup.procs"), member, missing_ok=True)
        except OSError:
            self.__exit__()
            self.groups = []
        return self

    def __exit__(self, *exc):
        for group in self.groups:
            for member in _read(os.path.join(group, "cgroup.procs")).split():
                _write(os.path.join(self.root, "cgroup.procs"), member, missing_ok=True)
            try:
                os.rmdir(group)
            except OSError:
                pass


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _write(path, value, missing_ok=False):
    try:
        with open(path, "w") as f:
            f.write(str(value))
    except ProcessLookupError:
        if not missing_ok:
            raise


def node_pid(url):
    """The pid of the node serving url: the rlm-mcp JVM started with its --host and --port."""
    u = urlparse(url)
    wanted = {"--host": u.hostname, "--port": str(u.port)}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            args = _read(f"/proc/{entry}/cmdline").split("\0")
            if "serve" in args and all(_option(args, name) == value for name, value in wanted.items()):
                return int(entry)
    raise RuntimeError(f"no node process serves {url}")


def _option(args, name):
    """The value given to option name in a command line's args, or None."""
    return args[args.index(name) + 1] if name in args[:-1] else None


def interleaved(step_a, step_b, calls):
    """calls pairs, a then b; each one's latencies in ms."""
    a, b = [], []
    for _ in range(calls):
        for step, out in ((step_a, a), (step_b, b)):
            t = time.perf_counter()
            step()
            out.append((time.perf_counter() - t) * 1000)
    return a, b


def forwarded_latency(cluster, calls, runs=3, warm_pairs=2000):
    """A call sent to a node that does not own the session, relayed to the owner, against the same call sent to
    the owner, interleaved: on the cluster as the earlier sections left it (its forwarding code not yet run, so
    not yet compiled), then, after warm_pairs more pairs, runs times on the warm cluster (a long-running one)."""
    direct, via = Client(cluster.urls[0]), Client(cluster.urls[1])
    sid = direct.session()
    assert cluster.ask(f"owner {sid}") == "0"

    def pair_p50s():
        a, b = interleaved(lambda: direct.tool("rlm_execute", sid, code="pass"),
                           lambda: via.tool("rlm_execute", sid, code="pass"), calls)
        return statistics.median(a), statistics.median(b), percentile(a, 90), percentile(b, 90)

    cold = pair_p50s()
    interleaved(lambda: direct.tool("rlm_execute", sid, code="pass"),
                lambda: via.tool("rlm_execute", sid, code="pass"), warm_pairs)
    warm = [pair_p50s() for _ in range(runs)]
    extra = [b - a for a, b, _, _ in warm]
    mid = sorted(warm, key=lambda w: w[1] - w[0])[len(warm) // 2]
    print(f"forwarded call (rlm_execute 'pass', sent to node 1, owner node 0) vs direct, {calls} each interleaved: "
          f"warm cluster (after {warm_pairs} more pairs), {runs} runs: +{statistics.median(extra):.2f} ms p50 "
          f"({min(extra):+.2f} ... {max(extra):+.2f}; goal <= +1 ms), the median run p50 {mid[1]:.2f} vs {mid[0]:.2f} "
          f"ms, p90 {mid[3]:.2f} vs {mid[2]:.2f} ms; the first {calls}, forwarding code not yet compiled: p50 "
          f"{cold[1]:.2f} vs {cold[0]:.2f} ms (+{cold[1] - cold[0]:.2f}); owner at the end: node "
          f"{cluster.ask(f'owner {sid}')}")
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


NODE_SHARE = 0.3  # of one CPU per node, when each is held to a share of its own


def scaling(cluster):
    """calls/s through nginx over 1, 2 and 3 nodes, in the order 1 2 3 3 2 1 so that what drifts (the JIT still
    compiling, the machine) weighs on every count alike: for each count its two rates and forwarded calls."""
    rates = {n: [] for n in (1, 2, 3)}
    for n in (1, 2, 3, 3, 2, 1):
        rates[n].append(throughput(cluster, n))
    return rates


def scaling_line(rates):
    return ", ".join(f"{n} node{'s' if n > 1 else ''} {statistics.mean(r for r, _, _ in runs):.0f} "
                     f"({' and '.join(f'{r:.0f}' for r, _, _ in runs)}; {sum(f for _, f, _ in runs)} of "
                     f"{sum(c for _, _, c in runs)} forwarded)" for n, runs in rates.items())


def bench_cluster(calls=300):
    cluster = Cluster(3, LEASE_MS)
    try:
        where = "each in a network namespace" if cluster.where == "namespaces" else "LOOPBACK PORTS, no namespaces"
        print(f"3 nodes ({where}), PostgreSQL 15 and S3Proxy on this machine, nginx {nginx_version()}")
        throughput(cluster, 3, seconds=60, warmup=0)  # every node past its start-up compilation
        forwarded_latency(cluster, calls)
        snapshot_cost(cluster, calls)
        shared = scaling(cluster)
        with NodeCpu(cluster.urls, NODE_SHARE) as held:
            own = scaling(cluster) if held.groups else None
        print("calls/s through nginx (16 clients, 16 sessions made through it, rlm_execute 'pass', consistent "
              "hashing, each after 4 s of the same load, in the order 1 2 3 3 2 1; first, 60 s on all three nodes): "
              f"the nodes sharing the machine's {os.cpu_count()} CPUs: {scaling_line(shared)}")
        if own is None:
            print("calls/s with each node held to a CPU share of its own: not measured (cgroups not writable here)")
        else:
            print(f"calls/s with each node held to {NODE_SHARE} CPU by a cgroup of its own, as on a machine of its "
                  f"own (goal: more nodes never fewer calls/s): {scaling_line(own)}")
        takeover(cluster, cluster.ask("balancer hash 0,1,2"))
    finally:
        cluster.close()


def nginx_version():
    out = subprocess.run(["/usr/sbin/nginx", "-v"], capture_output=True, text=True)
    return out.stderr.strip().split("/")[-1]
