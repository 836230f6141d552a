#!/usr/bin/env python3
"""Drives a language server directly, as the peer of tinytool's diagnostics rows.

    lsp-direct.py --server pyright|typescript --dir DIR --file REL --broken TEXT --fixed TEXT
                  [--warm N] [--method push|native]

Starts the server in DIR, opens FILE with the broken text and waits for its first
diagnostics (the cold time), then, with --warm N, changes the file N times between the
fixed and the broken text and waits each time for the diagnostics of the new version (the
warm times). Prints one JSON object: cold_ms, warm_ms (median), and the peak memory of the
server's processes (VmHWM summed over its process tree, in KiB).

--method native (the default) asks for the diagnostics the way tinytool does: pyright by
a pull request (`textDocument/diagnostic`, registered dynamically), typescript-language-
server by tsserver's synchronous diagnostics (`typescript.tsserverRequest`); --method push
waits for the server's own publish instead (what a client that only listens gets).
"""

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import time
import urllib.parse

SERVERS = {
    "pyright": (["pyright-langserver", "--stdio"], "python"),
    "typescript": (["typescript-language-server", "--stdio"], "typescript"),
}


class Server:
    def __init__(self, argv, cwd):
        self.proc = subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)
        self.buf = b""
        self.next_id = 1

    def send(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def receive(self, deadline):
        """The next message, or None at the deadline."""
        fd = self.proc.stdout.fileno()
        while True:
            head_end = self.buf.find(b"\r\n\r\n")
            if head_end >= 0:
                length = 0
                for line in self.buf[:head_end].split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                if len(self.buf) >= head_end + 4 + length:
                    body = self.buf[head_end + 4:head_end + 4 + length]
                    self.buf = self.buf[head_end + 4 + length:]
                    message = json.loads(body)
                    if "id" in message and "method" in message:
                        # A request of the server's: answered so it does not stall.
                        self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    sys.exit("the server exited")
                self.buf += chunk


def tree_hwm(pid):
    """VmHWM in KiB summed over pid and its descendants."""
    total = 0
    pending = [pid]
    while pending:
        p = pending.pop()
        try:
            with open(f"/proc/{p}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        total += int(line.split()[1])
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as children:
                    pending.extend(int(c) for c in children.read().split())
        except OSError:
            pass
    return total


def ask_diagnostics(server, server_name, path, uri, deadline):
    """Asks for the diagnostics of the document as the server holds it now, and waits for
    the answer(s)."""
    if server_name == "pyright":
        ids = {server.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})}
    else:
        ids = {server.request("workspace/executeCommand", {
            "command": "typescript.tsserverRequest",
            "arguments": [kind, {"file": path, "includeLinePosition": True},
                          {"executionTarget": 0}]})
            for kind in ("syntacticDiagnosticsSync", "semanticDiagnosticsSync")}
    while ids:
        message = server.receive(deadline)
        if message is None:
            sys.exit("no diagnostics in time")
        if "method" not in message and message.get("id") in ids:
            ids.discard(message["id"])


def wait_diagnostics(server, uri, version, deadline, versioned):
    """Waits for the diagnostics of `version` of `uri` (any later publish when the server
    sends no version)."""
    while True:
        message = server.receive(deadline)
        if message is None:
            sys.exit(f"no diagnostics for version {version} in time")
        if message.get("method") != "textDocument/publishDiagnostics":
            continue
        params = message["params"]
        if params["uri"] != uri:
            continue
        if versioned and params.get("version") not in (None, version):
            continue
        return params["diagnostics"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", choices=SERVERS, required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--file", required=True)
    parser.add_argument("--broken", required=True)
    parser.add_argument("--fixed", required=True)
    parser.add_argument("--warm", type=int, default=0)
    parser.add_argument("--method", choices=["push", "native"], default="native")
    args = parser.parse_args()
    argv, language = SERVERS[args.server]
    root = os.path.abspath(args.dir)
    path = os.path.join(root, args.file)
    uri = "file://" + urllib.parse.quote(path)
    versioned = args.server == "pyright"

    start = time.monotonic()
    server = Server(argv, root)
    server.request("initialize", {
        "processId": os.getpid(),
        "rootUri": "file://" + urllib.parse.quote(root),
        "workspaceFolders": [{"uri": "file://" + urllib.parse.quote(root), "name": "bench"}],
        "capabilities": {"textDocument": {
            "publishDiagnostics": {"versionSupport": True},
            "diagnostic": {"dynamicRegistration": args.method == "native"}}},
    })
    while True:
        message = server.receive(start + 60)
        if message is None:
            sys.exit("initialize was not answered")
        if message.get("id") == server.next_id and "method" not in message:
            break
    server.notify("initialized", {})
    native = args.method == "native"
    if native and args.server == "pyright":
        # Pull is offered once pyright registered it.
        while True:
            message = server.receive(start + 60)
            if message is None:
                sys.exit("pyright did not register pull diagnostics")
            if message.get("method") == "client/registerCapability":
                break

    def diagnostics(version, deadline):
        if native:
            ask_diagnostics(server, args.server, path, uri, deadline)
        else:
            wait_diagnostics(server, uri, version, deadline, versioned)

    server.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": language, "version": 1, "text": args.broken}})
    diagnostics(1, start + 60)
    cold_ms = (time.monotonic() - start) * 1000

    warm = []
    for version in range(2, args.warm + 2):
        text = args.fixed if version % 2 == 0 else args.broken
        began = time.monotonic()
        server.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": text}]})
        diagnostics(version, began + 30)
        warm.append((time.monotonic() - began) * 1000)
    hwm = tree_hwm(server.proc.pid)
    server.request("shutdown", None)
    server.notify("exit", None)
    try:
        server.proc.wait(5)
    except subprocess.TimeoutExpired:
        server.proc.kill()
    print(json.dumps({
        "cold_ms": round(cold_ms, 1),
        "warm_ms": round(statistics.median(warm), 1) if warm else None,
        "peak_kib": hwm,
    }))


if __name__ == "__main__":
    main()
