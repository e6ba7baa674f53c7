"""bin/bench --only agent-llm: the agent as the model. A step whose code asks a sub-call suspends and its call
returns the pending request; rlm_answer resumes it and returns the rest of the step. Measured over stdio with
the raw client of bench.py, so the figures are the server's (and the kernel's) time, not a client SDK's."""
import statistics
import time

from bench import StdioClient, percentile

RUNS = 3


def _ms(t):
    return (time.perf_counter() - t) * 1000


def _one_run(calls, warmup, batch_runs, batch):
    client = StdioClient("--llm-backend", "agent", "--llm-max-calls", "1000000")
    try:
        plain, suspend, resume = [], [], []
        for i in range(warmup + calls):
            t = time.perf_counter()
            client.tool("rlm_execute", code="x = 1")
            p = _ms(t)
            t = time.perf_counter()
            waiting = client.tool("rlm_execute", code="r = llm_query('q')")
            s = _ms(t)
            assert waiting["status"] == "suspended", waiting
            t = time.perf_counter()
            done = client.tool("rlm_answer", answers=[{"id": waiting["pending"][0]["id"], "text": "a"}])
            r = _ms(t)
            assert done["status"] == "ok", done
            if i >= warmup:
                plain.append(p)
                suspend.append(s)
                resume.append(r)
        asks, answers = [], []
        code = f"rs = llm_query_batched([f'prompt {{i}}' for i in range({batch})])"
        for i in range(batch_runs + 5):
            t = time.perf_counter()
            waiting = client.tool("rlm_execute", code=code)
            a = _ms(t)
            assert len(waiting["pending"]) == batch, waiting
            given = [{"id": p["id"], "text": "answer " + p["id"]} for p in waiting["pending"]]
            t = time.perf_counter()
            done = client.tool("rlm_answer", answers=given)
            b = _ms(t)
            assert done["status"] == "ok", done
            if i >= 5:
                asks.append(a)
                answers.append(b)
        trip = [s + r for s, r in zip(suspend, resume)]
        return {
            "plain": statistics.median(plain),
            "suspend": statistics.median(suspend),
            "resume": statistics.median(resume),
            "trip": statistics.median(trip),
            "trip_p90": percentile(trip, 90),
            "overhead": statistics.median(trip) - 2 * statistics.median(plain),
            "ask64": statistics.median(asks),
            "answer64": statistics.median(answers),
        }
    finally:
        client.close()


def bench_agent_llm(calls=300, warmup=100, batch_runs=30, batch=64):
    runs = [_one_run(calls, warmup, batch_runs, batch) for _ in range(RUNS)]

    def figure(key):
        values = sorted(r[key] for r in runs)
        return f"{statistics.median(values):.2f} ms ({values[0]:.2f} … {values[-1]:.2f})"

    print(f"agent-llm: {RUNS} runs, each {calls} suspend-and-resume round trips (after {warmup}) and {batch_runs} "
          f"batches of {batch}, over stdio; median of the runs' medians (range)")
    print(f"  plain rlm_execute x = 1 (for scale)                 {figure('plain')}")
    print(f"  rlm_execute that suspends on llm_query              {figure('suspend')}")
    print(f"  rlm_answer that resumes it to the end               {figure('resume')}")
    print(f"  round trip, suspend + resume (goal <= 2 ms p50)      {figure('trip')}")
    print(f"  round trip p90                                      {figure('trip_p90')}")
    print(f"  round trip over two plain calls                     {figure('overhead')}")
    print(f"  rlm_execute asking a batch of {batch}                  {figure('ask64')}")
    print(f"  rlm_answer with all {batch} answers (goal <= 20 ms)    {figure('answer64')}")
