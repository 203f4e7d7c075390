"""Live rows of the benchmark table, each batch in a fresh process.

Usage: python3 Benchmarks/live.py BINARY BASE_URL [ROUNDS]

For every row, ROUNDS rounds (3 by default); in each round Courier and its baseline run one
batch each, in fresh processes, in an order that flips every round. The ratio is computed per
round (same minute, same machine state), and the table shows the median with the min..max of
the per-round ratios, the median throughputs and client CPU per request, and the load average
before and after.

With COURIER_BENCH_AGAINST=OTHER_BINARY (a build of the same benchmark from an earlier commit),
every row compares its candidate with the same candidate in OTHER_BINARY instead of with its
baseline, interleaved the same way: a change's cost, measured side by side in one run. The CPU
column then also gives the per-round CPU ratio, median (min..max).
"""
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys

binary, base = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3

# (row name, kind, concurrency, requests per batch, candidate, baseline, target)
ROWS = [
    ("3. live small JSON, concurrency 1", "small", 1, 2000, "courier", "raw", "≥ 0.97"),
    ("3. live small JSON, concurrency 16", "small", 16, 4000, "courier", "raw", "≥ 0.97"),
    ("3. live 204, concurrency 1", "noContent", 1, 2000, "courier", "raw", "≥ 0.97"),
    ("3. live 204, concurrency 16", "noContent", 16, 4000, "courier", "raw", "≥ 0.97"),
    ("3. live 1 MB JSON, concurrency 1", "large", 1, 200, "courier", "raw", "≥ 0.99"),
    ("3. live 1 MB JSON, concurrency 16", "large", 16, 400, "courier", "raw", "≥ 0.99"),
    ("3c. live small JSON with a 10 MB size limit, concurrency 1", "small", 1, 2000, "courier-limit", "raw", "≥ 0.93"),
    ("3d. live small JSON with a 30 s timeout, concurrency 1", "small", 1, 2000, "courier-timeout", "raw-timeout", "≥ 0.93"),
    ("3b. raw delegate session vs data(for:), small, concurrency 1", "small", 1, 2000, "delegate", "raw", "(context)"),
    ("4. logging + retry middleware vs none, small, concurrency 16", "small", 16, 4000, "courier-middleware", "courier", "≥ 0.95"),
    # HTTPS on URLSession (nginx, TLS 1.3; libcurl negotiates HTTP/2 by ALPN), the run's
    # certificate trusted through a private mount namespace (see measure()).
    ("3t. HTTPS small JSON, concurrency 1", "small", 1, 2000, "courier@tls", "raw@tls", "≥ 0.95"),
    ("3t. HTTPS small JSON, concurrency 16", "small", 16, 4000, "courier@tls", "raw@tls", "≥ 0.95"),
    ("3t. HTTPS 1 MB JSON, concurrency 16", "large", 16, 400, "courier@tls", "raw@tls", "≥ 0.95"),
]


against = os.environ.get("COURIER_BENCH_AGAINST")


PATHS = {"small": "small.json", "noContent": "204", "large": "large.json"}


def measure_wrk(kind, concurrency, seconds=4):
    # The ceiling: wrk (C, epoll, framing only, no decoding) on the same URL, as many connections
    # as the row's concurrency, one thread (two from 16 connections: one per core). Its CPU per
    # request is the process's user + system time over the requests it completed.
    threads = 1 if concurrency < 16 else 2
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(["wrk", "-t%d" % threads, "-c%d" % concurrency, "-d%ds" % seconds, "%s/%s" % (base, PATHS[kind])],
                          capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit("live.py: wrk failed: %s" % done.stderr.strip()[-2000:])
    requests = int(re.search(r"(\d+) requests in", done.stdout).group(1))
    if "Non-2xx" in done.stdout or "Socket errors" in done.stdout:
        sys.exit("live.py: wrk saw errors: %s" % done.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"throughput": float(re.search(r"Requests/sec:\s*([\d.]+)", done.stdout).group(1)), "cpuPerRequest": cpu / requests}


def measure(kind, variant, concurrency, total, program=None):
    if variant == "wrk":
        return measure_wrk(kind, concurrency)
    # "VARIANT@h2" and "VARIANT@h1": the same variant over HTTPS (the TLS server Benchmarks/run
    # starts, its certificate trusted alone), HTTP/2 by ALPN or HTTP/1.1, on AsyncHTTPClient.
    # "VARIANT@tls": over HTTPS on URLSession, which trusts only the system's CA bundle: the process
    # runs in a private mount namespace whose bundle also holds the certificate (nothing else changes).
    variant, _, protocol = variant.partition("@")
    address, extra, prefix = base, [], []
    if protocol in ("h1", "h2"):
        address, extra = os.environ["COURIER_BENCH_TLS_URL"], ["--ca", os.environ["COURIER_BENCH_CA"]]
        if protocol == "h1":
            extra.append("--http1")
    elif protocol == "tls":
        address = os.environ["COURIER_BENCH_TLS_URL"]
        prefix = ["unshare", "-m", "--propagation", "private", "sh", "-c", 'mount --bind "$1" "$2" && shift 2 && exec "$@"',
                  "sh", os.environ["COURIER_BENCH_BUNDLE"], "/etc/ssl/certs/ca-certificates.crt"]
    done = subprocess.run(
        prefix + [program or binary, "--live-row", kind, "--variant", variant, "--url", address, "--concurrency", str(concurrency),
                  "--total", str(total)] + extra,
        capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("live.py: %s (%s) failed: %s" % (variant, protocol or "http", done.stderr.strip()[-2000:]))
    return json.loads(done.stdout)


def load():
    return "%.2f %.2f %.2f" % os.getloadavg()


# Courier's own transport (CourierNIO) against raw AsyncHTTPClient, each request built per call
# on both sides, as an application builds it; the bar is raw AsyncHTTPClient's throughput at no
# more CPU per request, the aim 1.5x on the small rows. COURIER_BENCH_SET=nio runs these alone.
NIO_ROWS = []
for label, kind, totals in (("small JSON", "small", (4000, 8000, 8000)), ("204", "noContent", (4000, 8000, 8000)),
                            ("1 MB JSON", "large", (200, 400, 400))):
    for concurrency, total in zip((1, 16, 64), totals):
        NIO_ROWS.append(("N. Courier on NIO vs raw AHC, %s, concurrency %d" % (label, concurrency), kind, concurrency, total,
                         "nio-courier-built", "ahc-raw-built", "≥ 1.0"))
for label, kind, concurrency, total in (("small JSON", "small", 1, 4000), ("small JSON", "small", 16, 8000),
                                        ("small JSON", "small", 64, 8000), ("1 MB JSON", "large", 16, 400)):
    NIO_ROWS.append(("N. HTTPS/1.1, Courier on NIO vs raw AHC, %s, concurrency %d" % (label, concurrency), kind, concurrency, total,
                     "nio-courier-built@h1", "ahc-raw-built@h1", "≥ 1.0"))
    NIO_ROWS.append(("N. HTTP/2, Courier on NIO vs raw AHC, %s, concurrency %d" % (label, concurrency), kind, concurrency, total,
                     "nio-courier-built@h2", "ahc-raw-built@h2", "≥ 1.0"))
# As servers configure Courier (the README's advice): a 30 s timeout on each request and a 16 MB
# size limit on the executor ("served"), against the same calls without them (what the two
# cost: CPU per request within 3% is the goal) and against raw AsyncHTTPClient, which sets its
# deadline and collects up to a limit on every request too.
for label, kind, concurrency, total in (("small JSON", "small", 1, 4000), ("small JSON", "small", 16, 8000),
                                        ("small JSON", "small", 64, 8000), ("204", "noContent", 1, 4000),
                                        ("204", "noContent", 16, 8000), ("1 MB JSON", "large", 16, 400)):
    NIO_ROWS.append(("S. a timeout and a size limit vs none, Courier on NIO, %s, concurrency %d" % (label, concurrency), kind,
                     concurrency, total, "nio-courier-served", "nio-courier-built", "CPU ≤ 1.03"))
for half, variant in (("a timeout alone", "nio-courier-timeout"), ("a size limit alone", "nio-courier-limit")):
    NIO_ROWS.append(("S. %s vs none, Courier on NIO, small JSON, concurrency 16" % half, "small", 16, 8000, variant,
                     "nio-courier-built", "CPU ≤ 1.03"))
for label, kind, concurrency, total in (("small JSON", "small", 1, 4000), ("small JSON", "small", 16, 8000),
                                        ("small JSON", "small", 64, 8000), ("204", "noContent", 1, 4000),
                                        ("204", "noContent", 16, 8000), ("204", "noContent", 64, 8000)):
    NIO_ROWS.append(("N. served (timeout + limit), Courier on NIO vs raw AHC, %s, concurrency %d" % (label, concurrency), kind,
                     concurrency, total, "nio-courier-served", "ahc-raw-built", "≥ 1.0"))
for label, kind, concurrency, total in (("small JSON", "small", 16, 8000), ("small JSON", "small", 64, 8000)):
    NIO_ROWS.append(("N. served, HTTP/2, Courier on NIO vs raw AHC, %s, concurrency %d" % (label, concurrency), kind, concurrency,
                     total, "nio-courier-served@h2", "ahc-raw-built@h2", "≥ 1.5"))
    NIO_ROWS.append(("N. served, HTTP/2 vs HTTPS/1.1, Courier on NIO, %s, concurrency %d" % (label, concurrency), kind, concurrency,
                     total, "nio-courier-served@h2", "nio-courier-served@h1", "CPU ≤ 1.0"))
# The ceiling: the served calls (every request built, sent with a timeout and a size limit,
# checked and decoded) against wrk on the same URL, interleaved round by round (goal: 85% at
# concurrency 1, 70% at 16 and 64); wrk only frames responses. Needs Debian's wrk.
if shutil.which("wrk"):
    for label, kind in (("small JSON", "small"), ("204", "noContent")):
        for concurrency, total in ((1, 4000), (16, 8000), (64, 8000)):
            NIO_ROWS.append(("W. served, Courier on NIO vs wrk, %s, concurrency %d" % (label, concurrency), kind, concurrency, total,
                             "nio-courier-served", "wrk", "≥ 0.85" if concurrency == 1 else "≥ 0.70"))
# The same served calls from worker tasks on the transport's event loops (EventLoopTaskExecutor,
# one per loop in turn): no thread hand-off per call. Against the served calls from tasks on the
# global executor, and against wrk.
for label, kind in (("small JSON", "small"), ("204", "noContent")):
    for concurrency, total in ((1, 4000), (16, 8000), (64, 8000)):
        NIO_ROWS.append(("L. served on the loops vs served, Courier on NIO, %s, concurrency %d" % (label, concurrency), kind,
                         concurrency, total, "nio-courier-served-loop", "nio-courier-served", "CPU ≤ 1.0"))
        if shutil.which("wrk"):
            NIO_ROWS.append(("L. served on the loops, Courier on NIO vs wrk, %s, concurrency %d" % (label, concurrency), kind,
                             concurrency, total, "nio-courier-served-loop", "wrk", "≥ 0.85" if concurrency == 1 else "≥ 0.70"))
    NIO_ROWS.append(("L. served on the loops vs served, Courier on NIO, 1 MB JSON, concurrency 16", "large", 16, 400,
                     "nio-courier-served-loop", "nio-courier-served", "≥ 1.0"))
NIO_ROWS += [
    ("N. Courier on NIO vs Courier on AHC, small JSON, concurrency 1", "small", 1, 4000, "nio-courier-built", "ahc-courier-built",
     "(context)"),
    ("N. Courier on NIO vs Courier on AHC, small JSON, concurrency 16", "small", 16, 8000, "nio-courier-built", "ahc-courier-built",
     "(context)"),
]
# COURIER_BENCH_SET=ahc: Courier on AsyncHTTPClient (Integrations/AsyncHTTPClient's
# CourierAHCBenchmarks binary) against raw AsyncHTTPClient, with raw URLSession for context.
if os.environ.get("COURIER_BENCH_SET") == "ahc":
    ROWS = [
        ("A. Courier on AHC vs raw AHC, small JSON, concurrency 1", "small", 1, 4000, "ahc-courier", "ahc-raw", "≥ 0.95"),
        ("A. Courier on AHC vs raw AHC, small JSON, concurrency 16", "small", 16, 8000, "ahc-courier", "ahc-raw", "≥ 0.95"),
        ("A. Courier on AHC vs raw AHC, 204, concurrency 1", "noContent", 1, 4000, "ahc-courier", "ahc-raw", "≥ 0.95"),
        ("A. Courier on AHC vs raw AHC, 204, concurrency 16", "noContent", 16, 8000, "ahc-courier", "ahc-raw", "≥ 0.95"),
        ("A. Courier on AHC vs raw AHC, 1 MB JSON, concurrency 1", "large", 1, 200, "ahc-courier", "ahc-raw", "≥ 0.90"),
        ("A. Courier on AHC vs raw AHC, 1 MB JSON, concurrency 16", "large", 16, 400, "ahc-courier", "ahc-raw", "≥ 0.90"),
        # The request built for each call, as an app builds it (base URL, path, bearer token,
        # decoder), on both sides: what a call costs, building included.
        ("P. built per call, Courier on AHC vs raw AHC, small JSON, concurrency 1", "small", 1, 4000, "ahc-courier-built", "ahc-raw-built", "≥ 0.95"),
        ("P. built per call, Courier on AHC vs raw AHC, small JSON, concurrency 16", "small", 16, 8000, "ahc-courier-built", "ahc-raw-built", "≥ 0.95"),
        ("P. built per call, Courier on AHC vs raw AHC, 204, concurrency 1", "noContent", 1, 4000, "ahc-courier-built", "ahc-raw-built", "≥ 0.95"),
        # As servers configure it: a 30 s timeout on each request, a 16 MB limit on the executor.
        ("P. served (timeout + limit), Courier on AHC vs raw AHC, small JSON, concurrency 1", "small", 1, 4000, "ahc-courier-served",
         "ahc-raw-built", "CPU ≤ 1.05"),
        ("P. served (timeout + limit), Courier on AHC vs raw AHC, small JSON, concurrency 16", "small", 16, 8000, "ahc-courier-served",
         "ahc-raw-built", "CPU ≤ 1.05"),
        ("P. served (timeout + limit), Courier on AHC vs raw AHC, 204, concurrency 1", "noContent", 1, 4000, "ahc-courier-served",
         "ahc-raw-built", "CPU ≤ 1.05"),
        ("P. served (timeout + limit), Courier on AHC vs raw AHC, 204, concurrency 16", "noContent", 16, 8000, "ahc-courier-served",
         "ahc-raw-built", "CPU ≤ 1.05"),
        ("S. a timeout and a size limit vs none, Courier on AHC, small JSON, concurrency 1", "small", 1, 4000, "ahc-courier-served",
         "ahc-courier-built", "CPU ≤ 1.03"),
        ("S. a timeout and a size limit vs none, Courier on AHC, small JSON, concurrency 16", "small", 16, 8000, "ahc-courier-served",
         "ahc-courier-built", "CPU ≤ 1.03"),
        ("B. raw AHC vs raw URLSession, small JSON, concurrency 1", "small", 1, 4000, "ahc-raw", "urlsession-raw", "(context)"),
        ("B. raw AHC vs raw URLSession, small JSON, concurrency 16", "small", 16, 8000, "ahc-raw", "urlsession-raw", "(context)"),
        ("C. Courier on AHC vs Courier on URLSession, small JSON, concurrency 1", "small", 1, 4000, "ahc-courier",
         "urlsession-courier", "(context)"),
        ("C. Courier on AHC vs Courier on URLSession, small JSON, concurrency 16", "small", 16, 8000, "ahc-courier",
         "urlsession-courier", "(context)"),
        # HTTPS (nginx, TLS 1.3, a certificate made for the run): Courier on AHC against raw AHC on
        # the same TLS configuration. URLSession on Linux has no HTTPS rows: it trusts only the
        # system's CA bundle, and a benchmark must not install one there.
        ("T. HTTPS/1.1, Courier on AHC vs raw AHC, small JSON, concurrency 1", "small", 1, 4000, "ahc-courier@h1", "ahc-raw@h1", "≥ 0.95"),
        ("T. HTTPS/1.1, Courier on AHC vs raw AHC, small JSON, concurrency 16", "small", 16, 8000, "ahc-courier@h1", "ahc-raw@h1", "≥ 0.95"),
        ("T. HTTPS/1.1, Courier on AHC vs raw AHC, small JSON, concurrency 64", "small", 64, 8000, "ahc-courier@h1", "ahc-raw@h1", "≥ 0.95"),
        ("T. HTTP/2, Courier on AHC vs raw AHC, small JSON, concurrency 1", "small", 1, 4000, "ahc-courier@h2", "ahc-raw@h2", "≥ 0.95"),
        ("T. HTTP/2, Courier on AHC vs raw AHC, small JSON, concurrency 16", "small", 16, 8000, "ahc-courier@h2", "ahc-raw@h2", "≥ 0.95"),
        ("T. HTTP/2, Courier on AHC vs raw AHC, small JSON, concurrency 64", "small", 64, 8000, "ahc-courier@h2", "ahc-raw@h2", "≥ 0.95"),
        ("T. HTTPS/1.1, Courier on AHC vs raw AHC, 1 MB JSON, concurrency 16", "large", 16, 400, "ahc-courier@h1", "ahc-raw@h1", "≥ 0.95"),
        ("T. HTTP/2, Courier on AHC vs raw AHC, 1 MB JSON, concurrency 16", "large", 16, 400, "ahc-courier@h2", "ahc-raw@h2", "≥ 0.95"),
        ("T. raw AHC, HTTP/2 vs HTTPS/1.1, small JSON, concurrency 64 (what multiplexing buys)", "small", 64, 8000, "ahc-raw@h2",
         "ahc-raw@h1", "(context)"),
    ] + NIO_ROWS

if os.environ.get("COURIER_BENCH_SET") == "nio":
    ROWS = NIO_ROWS

# COURIER_BENCH_SET=websocket: echo round trips over WebSocket (Benchmarks/WebSocket's binary,
# against the hummingbird-websocket echo server Benchmarks/run starts): Courier's socket on
# CourierNIO against swift-websocket's WebSocketClient and websocket-kit, each socket sending a
# message and reading its echo in turn; "concurrency" is the number of sockets. The bar: the best
# of them, at no more CPU per round trip.
WEBSOCKET_ROWS = []
for label, kind, totals in (("100-byte text", "small", (4000, 16000)), ("1 MiB binary", "large", (200, 320))):
    for concurrency, total in zip((1, 16), totals):
        for other, name in (("hummingbird", "swift-websocket"), ("websocketkit", "websocket-kit, callbacks"),
                            ("websocketkit-async", "websocket-kit, async")):
            WEBSOCKET_ROWS.append(("WS. echo, Courier vs %s, %s, concurrency %d" % (name, label, concurrency), kind, concurrency, total,
                                   "courier", other, "≥ 1.0"))
# Each socket's task on one of the transport's event loops (EventLoopTaskExecutor), against
# websocket-kit's callbacks, which run on its loop too.
for concurrency, total in ((1, 4000), (16, 16000)):
    WEBSOCKET_ROWS.append(("WS. echo, Courier from tasks on the loops vs websocket-kit, callbacks, 100-byte text, concurrency %d" % concurrency,
                           "small", concurrency, total, "courier-loop", "websocketkit", "≥ 1.0"))
# Courier's message handler (webSocket(_:onMessage:), each echo's handler sending the next with
# enqueue, on the connection's event loop) against websocket-kit's callbacks: like for like.
for concurrency, total in ((1, 4000), (16, 16000)):
    WEBSOCKET_ROWS.append(("WS. echo, Courier with a message handler vs websocket-kit, callbacks, 100-byte text, concurrency %d" % concurrency,
                           "small", concurrency, total, "courier-handler", "websocketkit", "≥ 1.0"))
# websocket-kit's `connect(on: group)` asks the group for a loop twice a socket, so on two loops
# its sockets do not spread as Courier's do (all on one, or three to one); here each socket names
# the next loop: both clients' sockets on both loops alike.
WEBSOCKET_ROWS.append(("WS. echo, Courier with a message handler vs websocket-kit, callbacks, sockets spread over the loops, 100-byte text, concurrency 16",
                       "small", 16, 16000, "courier-handler", "websocketkit-spread", "≥ 1.0"))
for concurrency, total in ((1, 2000), (16, 8000)):
    WEBSOCKET_ROWS.append(("WS. echo, permessage-deflate, Courier vs swift-websocket (zlib), 16 KiB JSON text, concurrency %d" % concurrency,
                           "json", concurrency, total, "courier-deflate", "hummingbird-deflate", "≥ 1.0"))
# The same with the client's context taken over (WebSocketCompression.clientNoContextTakeover
# false), as zlib's client keeps it: like for like.
for concurrency, total in ((1, 2000), (16, 8000)):
    WEBSOCKET_ROWS.append(("WS. echo, permessage-deflate, context taken over, Courier vs swift-websocket (zlib), 16 KiB JSON text, concurrency %d" % concurrency,
                           "json", concurrency, total, "courier-deflate-takeover", "hummingbird-deflate", "≥ 1.0"))
# 1 KiB of the same JSON: the smallest message Courier compresses by default
# (WebSocketCompression.minimumSize), where building a block's codes weighs most.
for label, variant in (("", "courier-deflate"), ("context taken over, ", "courier-deflate-takeover")):
    for concurrency, total in ((1, 4000), (16, 16000)):
        WEBSOCKET_ROWS.append(("WS. echo, permessage-deflate, %sCourier vs swift-websocket (zlib), 1 KiB JSON text, concurrency %d" % (label, concurrency),
                               "json1k", concurrency, total, variant, "hummingbird-deflate", "≥ 1.0"))
if os.environ.get("COURIER_BENCH_SET") == "websocket":
    ROWS = WEBSOCKET_ROWS
unit = "round trips/s" if os.environ.get("COURIER_BENCH_SET") == "websocket" else "req/s"

only = os.environ.get("COURIER_BENCH_ROWS")  # "|"-separated substrings of row names
if only:
    ROWS = [row for row in ROWS if any(part in row[0] for part in only.split("|"))]

# The URLSession HTTPS rows need a private mount namespace (root or user namespaces) and the
# bundle Benchmarks/run made; without them they are left out, and the table says so.
if any(row[4].endswith("@tls") for row in ROWS):
    bundle = os.environ.get("COURIER_BENCH_BUNDLE", "")
    try:
        usable = os.path.exists(bundle) and subprocess.run(
            ["unshare", "-m", "--propagation", "private", "true"], capture_output=True).returncode == 0
    except OSError:
        usable = False
    if not usable:
        print("(URLSession HTTPS rows left out: no private mount namespace or CA bundle here)")
        ROWS = [row for row in ROWS if not row[4].endswith("@tls")]

if against:
    # Each candidate once per kind and concurrency, against itself in the other build.
    seen, compared = set(), []
    for name, kind, concurrency, total, candidate, baseline, target in ROWS:
        if (kind, concurrency, candidate) in seen:
            continue
        seen.add((kind, concurrency, candidate))
        label = "%s: this build vs the other, %s, concurrency %d (%s)" % (name.split(",")[0].split(" vs ")[0], kind, concurrency, candidate)
        compared.append((label,
                         kind, concurrency, total, candidate, candidate + "#other", "(no regression)"))
    ROWS = compared

print("Live rows: each batch in a fresh process, %d rounds, load average before: %s" % (rounds, load()))
if against:
    print("Against the build at %s" % against)
print()
print("| benchmark | Courier (median) | baseline (median) | ratio: median (min..max) | target | client CPU / request |")
print("| --- | --- | --- | --- | --- | --- |")
for name, kind, concurrency, total, candidate, baseline, target in ROWS:
    ratios, ours, theirs, cpu_ours, cpu_theirs, cpu_ratios = [], [], [], [], [], []
    for round_index in range(rounds):
        order = [candidate, baseline] if round_index % 2 == 0 else [baseline, candidate]
        results = {}
        for variant in order:
            own, _, other = variant.partition("#")
            results[variant] = measure(kind, own, concurrency, total, program=against if other else None)
        ours.append(results[candidate]["throughput"])
        theirs.append(results[baseline]["throughput"])
        cpu_ours.append(results[candidate]["cpuPerRequest"] * 1e6)
        cpu_theirs.append(results[baseline]["cpuPerRequest"] * 1e6)
        ratios.append(ours[-1] / theirs[-1])
        cpu_ratios.append(cpu_ours[-1] / cpu_theirs[-1])
    ratios.sort()
    cpu_ratios.sort()
    cpu = "%.0f vs %.0f µs, ratio %.3f (%.3f..%.3f)" % (
        statistics.median(cpu_ours), statistics.median(cpu_theirs), statistics.median(cpu_ratios), cpu_ratios[0], cpu_ratios[-1])
    print("| %s | %.0f %s | %.0f %s | %.3f (%.3f..%.3f) | %s | %s |" % (
        name, statistics.median(ours), unit, statistics.median(theirs), unit, statistics.median(ratios), ratios[0], ratios[-1],
        target, cpu))
    sys.stdout.flush()
print()
print("Load average after: %s" % load())
