#!/usr/bin/env python3
"""Records a server's tools/list result exactly as sent.

usage: record.py CATALOG.json SERVER SOURCE -- COMMAND [ARG...]

Speaks raw JSON-RPC over stdio (initialize, notifications/initialized, tools/list, every page),
so nothing is validated or reordered on the way, and puts {"server": SERVER, "source": SOURCE,
"tools": [...]} into CATALOG.json's "servers" (replacing SERVER's entry, keeping the list in
name order). host/tests/data/search/catalog.json was recorded this way; SOURCE names the
package and version, as in "npm @playwright/mcp 0.0.83".
"""
import json
import subprocess
import sys


def main():
    out, server, source = sys.argv[1], sys.argv[2], sys.argv[3]
    command = sys.argv[sys.argv.index("--") + 1:]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)

    def send(message):
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    def answer(id_):
        for line in proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue  # a server that logs to stdout
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
    try:
        with open(out) as f:
            servers = json.load(f)["servers"]
    except FileNotFoundError:
        servers = []
    servers = [s for s in servers if s["server"] != server]
    servers.append({"server": server, "source": source, "tools": tools})
    servers.sort(key=lambda s: s["server"])
    with open(out, "w") as f:
        f.write('{"servers": [\n')
        f.write(",\n".join(json.dumps(s, ensure_ascii=False) for s in servers))
        f.write("\n]}\n")


main()
