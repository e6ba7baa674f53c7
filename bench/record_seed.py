"""Records the seed-000 server's replies to the context task set into bench/fixtures/seed000-replies.json.

Start the seed server first (it is not part of this project; see its own README), then:

    python3 bench/record_seed.py --url http://127.0.0.1:8799/mcp

It speaks JSON-RPC over POST /mcp, one call after the other, and keeps each reply's text content.
"""
import argparse
import json
import os
import urllib.request

import context_tasks

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixtures", "seed000-replies.json")


def rpc(url, method, params, rid):
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read())["result"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the seed server's MCP endpoint, e.g. http://127.0.0.1:8799/mcp")
    parser.add_argument("--out", default=FIXTURE)
    args = parser.parse_args()
    log, csv_text, calls = context_tasks.tasks()
    rpc(args.url, "initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                 "clientInfo": {"name": "record-seed", "version": "1"}}, 1)
    tools = rpc(args.url, "tools/list", {}, 2)
    replies = []
    for i, (label, tool, arguments, expect) in enumerate(calls):
        result = rpc(args.url, "tools/call", {"name": tool,
                                              "arguments": context_tasks.inline(arguments, log, csv_text)}, 3 + i)
        text = "".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
        missing = [e for e in expect if e not in text]
        replies.append({"label": label, "tool": tool, "arguments": arguments, "text": text,
                        "is_error": bool(result.get("isError")), "text_bytes": len(text.encode()),
                        "structured_bytes": 0 if result.get("structuredContent") is None else
                        len(json.dumps(result["structuredContent"], separators=(",", ":")).encode()),
                        "missing": missing})
    with open(args.out, "w") as f:
        json.dump({"server": "seed-000 (FastAPI RLM MCP server, HTTP /mcp)",
                   "tools_list_bytes": len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode()),
                   "replies": replies}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    total = sum(r["text_bytes"] for r in replies)
    print(f"recorded {len(replies)} replies, {total} bytes of text, into {args.out}")
    for r in replies:
        if r["missing"]:
            print(f"  {r['label']}: the seed's reply lacks {r['missing']}")


if __name__ == "__main__":
    main()
