#!/usr/bin/env python3
"""bench/soak.py — a steady mix of tool calls against long-running MCP servers, and their
resident memory over time (issue 44: "a server that runs for days").

Usage: soak.py [--bin TT] [--minutes M] [--http-sessions N] [--stdio-clients N]
               [--sample SECONDS] [--warmup MINUTES] [--max-growth PCT] [--json FILE]

Starts two servers, each on a project of its own (a few hundred files in nested folders,
a policy that allows every command):
  - `tinytool mcp --listen 127.0.0.1:0`, driven by --http-sessions sessions (one thread
    each, `initialize` then calls on an event stream);
  - `tinytool mcp` on stdio, driven by --stdio-clients threads sharing its one connection
    (requests in flight together, answers matched by id).
Every thread loops over the same mix, on files of its own (a bounded set, so the project
does not grow): write, read, edit, grep, bash, glob. Every --sample seconds it records each
server's VmRSS, threads, open descriptors and zombie children; at the end it prints RSS
at the start (after `initialize`), after the warm-up, at the end of the load, and after
3 s idle, the growth between the warm-up and the end, and whether a zombie child was seen
once the load stopped. Exit status: 1 when a call failed at the protocol level or a server
died, or (with --max-growth) when RSS grew more than PCT percent after the warm-up; 0
otherwise.
"""

import argparse
import http.client
import itertools
import json
import os
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda".split()


def make_project(root):
    """A project of 400 files in nested folders, and a policy that allows every command."""
    os.makedirs(root)
    rng = random.Random(7)
    for d in range(20):
        folder = os.path.join(root, "src", f"mod{d:02}", "deep")
        os.makedirs(folder)
        for f in range(20):
            lines = [
                f"fn f{d}_{f}_{n}() {{ let {rng.choice(WORDS)} = {n}; }}" for n in range(40)
            ]
            with open(os.path.join(folder, f"file{f:02}.rs"), "w") as out:
                out.write("\n".join(lines) + "\n")
    subprocess.run(["git", "init", "-q", root], check=False)
    policy = os.path.join(os.path.dirname(root), os.path.basename(root) + "-policy.json")
    with open(policy, "w") as out:
        json.dump({"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}, out)
    return policy


def rss_kib(pid):
    """VmRSS, threads, open descriptors and zombie children of `pid` (None when gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
        rss = int(fields["VmRSS"].split()[0])
        anon = int(fields["RssAnon"].split()[0])
        threads = int(fields["Threads"])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, KeyError, ValueError):
        return None
    return {"rss": rss, "anon": anon, "threads": threads, "fds": fds, "zombies": zombies(pid)}


def zombies(pid):
    """Names of the zombie children of `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses.
        name = text[text.index("(") + 1 : text.rindex(")")]
        rest = text[text.rindex(")") + 2 :].split()
        if rest[0] == "Z" and rest[1] == str(pid):
            found.append(name)
    return found


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.calls = 0
        self.tool_errors = 0
        self.failures = []

    def done(self, is_error):
        with self.lock:
            self.calls += 1
            self.tool_errors += bool(is_error)

    def fail(self, text):
        with self.lock:
            self.failures.append(text)


def mix(worker, fresh=False):
    """The calls of one loop turn of `worker`: its own files, a bounded set (with `fresh`,
    a new file every turn: the project grows)."""
    n = 0
    while True:
        n += 1
        name = f"work/w{worker}/f{n if fresh else n % 8}.txt"
        body = "\n".join(f"{worker} {n} {i} {random.choice(WORDS)}" for i in range(60)) + "\n"
        yield "write", {"file_path": name, "content": body}
        yield "read", {"file_path": name}
        yield "edit", {"file_path": name, "old_string": f"{worker} {n} 7 ",
                       "new_string": f"{worker} {n} seven "}
        yield "grep", {"pattern": random.choice(WORDS) + r" = \d+;", "path": "src"}
        yield "bash", {"command": f"echo {n}; ls src | wc -l"}
        yield "glob", {"pattern": "**/file0*.rs"}


class HttpSession:
    """One initialize-era session over Streamable HTTP (event streams for calls)."""

    def __init__(self, port, churn=0):
        self.port = port
        self.churn = churn
        self.conn = None
        self.session = None
        self.ids = itertools.count(1)

    def post(self, message):
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Host": f"127.0.0.1:{self.port}",
        }
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            self.conn.request("POST", "/mcp", json.dumps(message), headers)
            reply = self.conn.getresponse()
            body = reply.read().decode()
        except (OSError, http.client.HTTPException):
            # A connection the server closed between requests: once more, fresh.
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            self.conn.request("POST", "/mcp", json.dumps(message), headers)
            reply = self.conn.getresponse()
            body = reply.read().decode()
        if reply.getheader("Mcp-Session-Id"):
            self.session = reply.getheader("Mcp-Session-Id")
        if reply.status != 200:
            raise RuntimeError(f"HTTP {reply.status}: {body[:200]}")
        if (reply.getheader("Content-Type") or "").startswith("text/event-stream"):
            for line in body.splitlines():
                if line.startswith("data: "):
                    data = json.loads(line[6:])
                    if data.get("id") == message["id"]:
                        return data
            raise RuntimeError("the event stream ended without the answer")
        return json.loads(body)

    def initialize(self):
        self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "soak", "version": "1"}}})

    def call(self, name, arguments, progress=False):
        n = next(self.ids)
        if self.churn and n % self.churn == 0:
            # A client that goes and another that comes: the session is deleted, a new one
            # opened.
            self.close()
            self.conn = self.session = None
            self.initialize()
        params = {"name": name, "arguments": arguments}
        if progress:
            params["_meta"] = {"progressToken": f"p{n}"}
        return self.post({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})

    def close(self):
        if self.session and self.conn:
            try:
                self.conn.request("DELETE", "/mcp", headers={
                    "Mcp-Session-Id": self.session, "Host": f"127.0.0.1:{self.port}"})
                self.conn.getresponse().read()
            except (OSError, http.client.HTTPException):
                pass
            self.conn.close()


class StdioServer:
    """`tinytool mcp` on stdio; requests from several threads, answers matched by id."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lock = threading.Lock()
        self.waiting = {}
        self.ids = itertools.count(1)
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            waiter = self.waiting.pop(message.get("id"), None)
            if waiter is not None:
                waiter.put(message)
        for waiter in list(self.waiting.values()):
            waiter.put(None)

    def request(self, method, params):
        box = queue.Queue(1)
        with self.lock:
            n = next(self.ids)
            self.waiting[n] = box
            self.proc.stdin.write(json.dumps(
                {"jsonrpc": "2.0", "id": n, "method": method, "params": params}) + "\n")
            self.proc.stdin.flush()
        answer = box.get(timeout=120)
        if answer is None:
            raise RuntimeError("the stdio server closed its output")
        return answer

    def call(self, name, arguments, progress=False):
        params = {"name": name, "arguments": arguments}
        if progress:
            params["_meta"] = {"progressToken": f"p{next(self.ids)}"}
        return self.request("tools/call", params)


def drive(call, worker, stop, counters, args):
    for name, arguments in mix(worker, args.fresh_files):
        if stop.is_set():
            return
        try:
            answer = call(name, arguments, args.progress)
        except Exception as err:  # noqa: BLE001 - every failure is reported, none ends the run
            counters.fail(f"{name}: {err}")
            time.sleep(0.5)
            continue
        if "result" not in answer:
            counters.fail(f"{name}: {json.dumps(answer)[:200]}")
            continue
        counters.done(answer["result"].get("isError"))


def mib(kib):
    return f"{kib / 1024:.1f} MiB"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--bin", default=os.environ.get("TT") or os.path.join(
        here, "..", "target", "release", "tinytool"))
    parser.add_argument("--minutes", type=float, default=3)
    parser.add_argument("--warmup", type=float, default=1, help="minutes")
    parser.add_argument("--http-sessions", type=int, default=6)
    parser.add_argument("--stdio-clients", type=int, default=4)
    parser.add_argument("--sample", type=float, default=10)
    parser.add_argument("--max-growth", type=float, default=None, help="percent")
    parser.add_argument("--fresh-files", action="store_true",
                        help="write a new file every turn (the project grows)")
    parser.add_argument("--progress", action="store_true",
                        help="every call asks for progress (a progress token)")
    parser.add_argument("--churn", type=int, default=0,
                        help="an HTTP session is deleted and another opened every N calls")
    parser.add_argument("--json", default=None, help="write every sample to FILE")
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="tinytool-soak.")
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(tmp, "config"),
               XDG_STATE_HOME=os.path.join(tmp, "state"))
    try:
        return run(args, tmp, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(args, tmp, env):
    servers = {}
    http_dir, stdio_dir = os.path.join(tmp, "http"), os.path.join(tmp, "stdio")
    http_policy, stdio_policy = make_project(http_dir), make_project(stdio_dir)
    listen = subprocess.Popen(
        [args.bin, "--dir", http_dir, "--policy", http_policy, "mcp", "--listen",
         "127.0.0.1:0"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, env=env)
    port = None
    for line in listen.stderr:
        if "listening on http://" in line:
            port = int(line.strip().rsplit(":", 1)[1].split("/")[0])
            break
    if port is None:
        print("soak: the HTTP server did not start", file=sys.stderr)
        return 1
    threading.Thread(target=listen.stderr.read, daemon=True).start()
    servers["http"] = listen.pid
    stdio = StdioServer([args.bin, "--dir", stdio_dir, "--policy", stdio_policy, "mcp"])
    servers["stdio"] = stdio.proc.pid
    stdio.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "soak", "version": "1"}})
    sessions = [HttpSession(port, args.churn) for _ in range(args.http_sessions)]
    for session in sessions:
        session.initialize()

    counters = Counters()
    stop = threading.Event()
    samples = []
    start = time.monotonic()

    def sample(label):
        row = {"t": round(time.monotonic() - start, 1), "label": label, "calls": counters.calls}
        for name, pid in servers.items():
            row[name] = rss_kib(pid)
        samples.append(row)
        line = f"soak: {row['t']:7.1f} s {label:<8} calls {row['calls']:6}"
        for name in servers:
            info = row[name]
            line += (f"  {name} " + (f"{mib(info['rss'])} (anon {mib(info['anon'])}) "
                                     f"{info['threads']} thr "
                                     f"{info['fds']} fd {len(info['zombies'])} zombie"
                                     if info else "gone"))
        print(line, flush=True)
        return row

    print(f"soak: servers: http pid {servers['http']}, stdio pid {servers['stdio']}", flush=True)
    at_start = sample("start")
    threads = []
    for n, session in enumerate(sessions):
        threads.append(threading.Thread(target=drive, args=(session.call, f"h{n}", stop,
                                                           counters, args), daemon=True))
    for n in range(args.stdio_clients):
        threads.append(threading.Thread(target=drive, args=(stdio.call, f"s{n}", stop,
                                                           counters, args), daemon=True))
    for thread in threads:
        thread.start()
    warm_at = start + args.warmup * 60
    end_at = start + args.minutes * 60
    warm = None
    while time.monotonic() < end_at:
        time.sleep(min(args.sample, max(0.1, end_at - time.monotonic())))
        now = time.monotonic()
        label = "load"
        if warm is None and now >= warm_at:
            label = "warm"
        row = sample(label)
        if label == "warm":
            warm = row
        if any(row[name] is None for name in servers):
            counters.fail("a server died")
            break
    stop.set()
    for thread in threads:
        thread.join(timeout=130)
    at_end = sample("end")
    # Children are reaped at once: none may be a zombie once the calls are answered.
    time.sleep(0.5)
    after = sample("settled")
    time.sleep(2.5)
    idle = sample("idle")
    for session in sessions:
        session.close()
    stdio.proc.stdin.close()
    stdio.proc.wait(timeout=30)
    listen.terminate()
    listen.wait(timeout=30)

    warm = warm or at_start
    print()
    print(f"soak: {counters.calls} calls in {args.minutes:g} min "
          f"({counters.tool_errors} tool errors, {len(counters.failures)} failures), "
          f"{args.http_sessions} HTTP sessions, {args.stdio_clients} stdio clients")
    failed = bool(counters.failures)
    for text in counters.failures[:10]:
        print(f"soak: failure: {text}")
    for name in servers:
        s, w, e, i = (row[name]["rss"] if row[name] else 0
                      for row in (at_start, warm, at_end, idle))
        growth = (e - w) / w * 100 if w else 0.0
        span = (at_end["t"] - warm["t"]) / 60
        rate = (e - w) / 1024 / span if span > 0 else 0.0
        print(f"soak: {name:<5} RSS start {mib(s)}, after warm-up ({warm['t']:.0f} s) "
              f"{mib(w)}, end {mib(e)}, idle {mib(i)}; {growth:+.1f} % after warm-up "
              f"({rate:+.2f} MiB/min)")
        lingering = after[name]["zombies"] if after[name] else []
        if lingering:
            print(f"soak: {name:<5} zombie children 0.5 s after the load: {lingering}")
            failed = True
        if args.max_growth is not None and growth > args.max_growth:
            print(f"soak: {name}: RSS grew more than {args.max_growth:g} % after the warm-up")
            failed = True
    if args.json:
        with open(args.json, "w") as out:
            json.dump(samples, out, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
