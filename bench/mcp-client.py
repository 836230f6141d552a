#!/usr/bin/env python3
"""bench/mcp-client.py — COUNT read calls to `tinytool mcp`, one at a time (each waits for
its answer, as an agent's loop does), over stdio or over Streamable HTTP on one keep-alive
connection. Exits 1 unless every call is answered without an error.

Usage: mcp-client.py stdio TINYTOOL DIR FILE COUNT
       mcp-client.py http TINYTOOL DIR FILE COUNT   (starts `mcp --listen` itself)
"""

import http.client
import json
import re
import subprocess
import sys

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(n, path):
    return {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tools/call",
        "params": {"name": "read", "arguments": {"file_path": path}},
    }


def check(answer, n):
    if answer.get("id") != n or answer.get("result", {}).get("isError", True):
        sys.exit(f"call {n}: {json.dumps(answer)[:300]}")


def over_stdio(tinytool, folder, path, count):
    server = subprocess.Popen(
        [tinytool, "--dir", folder, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    send = lambda message: (server.stdin.write(json.dumps(message).encode() + b"\n"), server.stdin.flush())
    send(INIT)
    json.loads(server.stdout.readline())
    send(INITIALIZED)
    for n in range(1, count + 1):
        send(call(n, path))
        check(json.loads(server.stdout.readline()), n)
    server.stdin.close()
    server.wait()


def over_http(tinytool, folder, path, count):
    server = subprocess.Popen(
        [tinytool, "--dir", folder, "mcp", "--listen", "127.0.0.1:0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port = int(re.search(r"127\.0\.0\.1:(\d+)", server.stderr.readline()).group(1))
        connection = http.client.HTTPConnection("127.0.0.1", port)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

        def post(message):
            connection.request("POST", "/mcp", json.dumps(message), headers)
            response = connection.getresponse()
            body = response.read()
            if response.getheader("Content-Type", "").startswith("text/event-stream"):
                datas = [line[5:] for line in body.decode().splitlines() if line.startswith("data:")]
                body = datas[-1] if datas else "{}"
            return response, json.loads(body or "{}")

        response, _ = post(INIT)
        headers["Mcp-Session-Id"] = response.getheader("Mcp-Session-Id")
        headers["MCP-Protocol-Version"] = "2025-06-18"
        post(INITIALIZED)
        for n in range(1, count + 1):
            check(post(call(n, path))[1], n)
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    mode, tinytool, folder, path, count = sys.argv[1:6]
    {"stdio": over_stdio, "http": over_http}[mode](tinytool, folder, path, int(count))
