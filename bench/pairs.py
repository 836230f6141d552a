#!/usr/bin/env python3
"""Interleaved pairs for bench/lib.sh's cost_row.

    pairs.py PAIRS WARMUP 'WITH CMD' 'WITHOUT CMD'

Runs each command WARMUP times, then PAIRS pairs of one run of each, the order flipped
every pair (a slow moment of the machine falls on both sides alike). A command is shell
text: run under bash when it has shell syntax, else split into words and run directly.
Output is discarded; a non-zero exit stops with status 1. Prints one line, seconds:
``median_with median_without median_of_differences``.
"""

import shlex
import statistics
import subprocess
import sys
import time

SHELL_CHARS = set("|<>;&$`*?(){}~")


def argv_of(command):
    if SHELL_CHARS & set(command):
        return ["bash", "-c", command]
    return shlex.split(command)


def timed(argv):
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        print(f"pairs.py: {shlex.join(argv)} exited with {done.returncode}", file=sys.stderr)
        sys.exit(1)
    return elapsed


def main():
    pairs, warmup = int(sys.argv[1]), int(sys.argv[2])
    with_layer, without = argv_of(sys.argv[3]), argv_of(sys.argv[4])
    for _ in range(warmup):
        timed(with_layer)
        timed(without)
    ons, offs, diffs = [], [], []
    for i in range(pairs):
        if i % 2:
            on, off = timed(with_layer), timed(without)
        else:
            off = timed(without)
            on = timed(with_layer)
        ons.append(on)
        offs.append(off)
        diffs.append(on - off)
    print(statistics.median(ons), statistics.median(offs), statistics.median(diffs))


if __name__ == "__main__":
    main()
