"""The scripted task set of the context benchmark: the same calls on rlm-mcp and on the seed-000 server.

Only tools both servers have (rlm_execute, rlm_load_data, rlm_list_vars, rlm_var_info, rlm_memory,
rlm_clear); data goes in inline, and every answer is printed, since the seed does not echo a bare
expression. Each call lists the answers its reply must show ("expect"). The data is made here,
deterministically, so the recorded seed replies stay valid: a 60,000-line log and a 30,000-row CSV.

    python3 bench/context_tasks.py --write DIR    # DIR/tasks.json: the calls with their data inlined
"""
import argparse
import json
import os
import random

LOG_LINES = 60_000
CSV_ROWS = 30_000
NEEDLE = "req-7f3a9c"
LEVELS = ["INFO"] * 14 + ["DEBUG"] * 4 + ["WARN"] * 2 + ["ERROR"]
SERVICES = ["api", "auth", "billing", "search", "worker"]
REGIONS = ["north", "south", "east", "west"]
PRODUCTS = ["widget", "gadget", "doohickey", "gizmo", "sprocket", "thingamajig"]


def make_log():
    rng = random.Random(7)
    lines = []
    for i in range(LOG_LINES):
        level = rng.choice(LEVELS)
        service = rng.choice(SERVICES)
        request = f"req-{rng.getrandbits(24):06x}"
        ms = rng.randint(1, 900)
        lines.append(f"2026-03-{1 + i * 28 // LOG_LINES:02d}T{(i // 2500) % 24:02d}:{(i // 42) % 60:02d}:{i % 60:02d}Z "
                     f"{level} {service} {request} GET /v1/{service}/items/{rng.randint(1, 9999)} {ms}ms")
    lines[41_337] = (f"2026-03-20T13:45:12Z ERROR billing {NEEDLE} POST /v1/billing/charge 503 "
                     "upstream timeout card=**** 4242")
    return "\n".join(lines)


def make_csv():
    rng = random.Random(11)
    rows = ["order_id,date,region,product,quantity,amount"]
    for i in range(CSV_ROWS):
        quantity = rng.randint(1, 20)
        rows.append(f"{100000 + i},2026-0{1 + i * 6 // CSV_ROWS}-{1 + i % 28:02d},{rng.choice(REGIONS)},"
                    f"{rng.choice(PRODUCTS)},{quantity},{quantity * rng.randint(250, 4999) / 100:.2f}")
    return "\n".join(rows)


def answers(log, csv_text):
    """What each question's reply must show, worked out here in plain Python."""
    lines = log.split("\n")
    rows = [r.split(",") for r in csv_text.split("\n")[1:]]
    by_region = {}
    for r in rows:
        by_region[r[2]] = by_region.get(r[2], 0.0) + float(r[5])
    services = {}
    for line in lines:
        if " ERROR " in line:
            service = line.split()[2]
            services[service] = services.get(service, 0) + 1
    top = max(services.items(), key=lambda kv: kv[1])
    return {
        "sizes": [f"{len(lines)} {len(rows)}"],
        "needle": [NEEDLE, "upstream timeout"],
        "errors": [str(sum(1 for line in lines if " ERROR " in line))],
        "regions": [f"{k} {round(v, 2)}" for k, v in sorted(by_region.items())],
        "top": [f"{top[0]} {top[1]}"],
        "first_region": [rows[0][2]],
    }


def tasks():
    """The calls, in order: (label, tool, arguments, expected strings). Data as '$log' / '$csv'."""
    log, csv_text = make_log(), make_csv()
    want = answers(log, csv_text)
    return log, csv_text, [
        ("load log", "rlm_load_data", {"name": "log", "data": "$log", "data_type": "lines"}, ["log"]),
        ("load csv", "rlm_load_data", {"name": "sales", "data": "$csv", "data_type": "csv"}, ["sales"]),
        ("x = 1", "rlm_execute", {"code": "x = 1"}, []),
        ("print(42)", "rlm_execute", {"code": "print(42)"}, ["42"]),
        ("1/0", "rlm_execute", {"code": "1/0"}, ["ZeroDivisionError"]),
        ("sizes", "rlm_execute", {"code": "print(len(log), len(sales))"}, want["sizes"]),
        ("peek", "rlm_execute", {"code": "print(log[0])\nprint(sales[0])"}, ["order_id", "GET /v1/"]),
        ("needle", "rlm_execute", {"code": f"hits = [l for l in log if '{NEEDLE}' in l]\nprint(hits)"},
         want["needle"]),
        ("count", "rlm_execute", {"code": "errors = [l for l in log if ' ERROR ' in l]\nprint(len(errors))"},
         want["errors"]),
        ("group by", "rlm_execute", {"code": "from collections import defaultdict\n"
                                             "by_region = defaultdict(float)\n"
                                             "for r in sales:\n    by_region[r['region']] += float(r['amount'])\n"
                                             "for k in sorted(by_region):\n    print(k, round(by_region[k], 2))"},
         want["regions"]),
        ("top service", "rlm_execute", {"code": "from collections import Counter\n"
                                                "top = Counter(l.split()[2] for l in errors).most_common(1)[0]\n"
                                                "print(top[0], top[1])"}, want["top"]),
        ("list_vars", "rlm_list_vars", {}, ["log", "sales", "hits", "errors"]),
        ("var_info", "rlm_var_info", {"name": "sales"}, ["sales", "list"]),
        ("memory", "rlm_memory", {}, ["%"]),
        ("mistake", "rlm_execute", {"code": "print(sales[0]['regoin'])"}, ["KeyError", "regoin"]),
        ("fixed", "rlm_execute", {"code": "print(sales[0]['region'])"}, want["first_region"]),
        ("clear one", "rlm_clear", {"name": "hits"}, ["hits"]),
        ("clear all", "rlm_clear", {"all": True}, []),
        ("list_vars empty", "rlm_list_vars", {}, []),
    ]


def inline(arguments, log, csv_text):
    return {k: (log if v == "$log" else csv_text if v == "$csv" else v) for k, v in arguments.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", required=True, help="directory to write tasks.json into")
    args = parser.parse_args()
    log, csv_text, calls = tasks()
    os.makedirs(args.write, exist_ok=True)
    with open(os.path.join(args.write, "tasks.json"), "w") as f:
        json.dump([{"label": label, "tool": tool, "arguments": inline(arguments, log, csv_text), "expect": expect}
                   for label, tool, arguments, expect in calls], f)


if __name__ == "__main__":
    main()
