#!/usr/bin/env python3
"""Records a server's tools/list result exactly as sent, for host/tests/real_schemas.rs.

usage: record.py OUT.json SOURCE -- COMMAND [ARG...]

Speaks raw JSON-RPC over stdio (initialize, notifications/initialized, tools/list, every page),
so nothing is validated or reordered on the way; writes {"source": SOURCE, "tools": [...]}.
"""
import json
import subprocess
import sys


def main():
    out, source = sys.argv[1], sys.argv[2]
    command = sys.argv[sys.argv.index("--") + 1:]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)

    def send(message):
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    def answer(id_):
        for line in proc.stdout:
            message = json.loads(line)
            if message.get("id") == id_:
                return message["result"]
        raise SystemExit("the server closed before answering")

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "record", "version": "0"}}})
    answer(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools, cursor, id_ = [], None, 2
    while True:
        params = {"cursor": cursor} if cursor else {}
        send({"jsonrpc": "2.0", "id": id_, "method": "tools/list", "params": params})
        page = answer(id_)
        tools += page["tools"]
        cursor, id_ = page.get("nextCursor"), id_ + 1
        if not cursor:
            break
    proc.kill()
    with open(out, "w") as f:
        json.dump({"source": source, "tools": tools}, f, indent=1, sort_keys=False)
        f.write("\n")


main()
