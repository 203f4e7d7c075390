#!/usr/bin/env python3
"""Who kept the memory a soak did not give back: heaptrack's leak report, summed by owner.

Reads `heaptrack_print --print-leaks 1` (demangled) on standard input and prints the bytes still
allocated at exit, grouped by the code that asked for them: the innermost frame that is not an
allocator, the Swift runtime, the standard library, libdispatch or Foundation's value types
(their callers decide whether memory is kept). Frames in this repository are Courier's (or the
soak harness's); frames in a package checkout are that package's; the rest are named by their
shared library (FoundationNetworking, libcurl, ...).

    heaptrack_print -f run.zst --print-leaks 1 --print-peaks 0 --print-allocators 0 \\
        --print-temporary 0 | swift demangle --simplified | Benchmarks/leaks.py --calls 11226

Benchmarks/soak --heaptrack runs all of it. With --calls, each owner's bytes are divided by the
soak's completed calls; one-off allocations (libraries initialising, caches filled once) are
included, so a short run overstates the per-call figure a little.
"""
import argparse
import collections
import re
import sys

UNITS = {"B": 1, "K": 1e3, "M": 1e6, "G": 1e9}
# Libraries whose allocations are made on behalf of a caller further out.
PASS_THROUGH = re.compile(
    r"lib(c|stdc\+\+|swiftCore|dispatch|swiftDispatch|FoundationEssentials|Foundation|FoundationInternationalization|"
    r"_FoundationICU|icu\w*|heaptrack\w*|m|pthread)\.so|ld-linux|/swift/stdlib/|/swift-foundation/"
)
# Frames in the soak harness (its tallies, samples and workers), not in the executor under test.
HARNESS = re.compile(
    r"/Sources/CourierConformance/Soak/|/Sources/CourierSoak/|/Sources/CourierAHCSoak/|CourierSoak_main|CourierAHCSoak_main|"
    r"\bSoak\.|\bTally\.|CourierSoak\.|CourierAHCSoak\."
)
# The standard library's generic code, specialised into the binary: its caller decides.
STANDARD_LIBRARY = re.compile(r"^(specialized |generic specialization <.*> of )?(static )?_?(ContiguousArrayBuffer|ContiguousArray|ArrayBuffer|NativeDictionary|NativeSet|Array|Dictionary|Set|String|Data)\b|^(specialized )?_[A-Z]\w*(Buffer|Storage)")


def parse(lines):
    """Yields (bytes, calls, frames), frames as (function, location) from the allocation outwards."""
    entry = None
    frame = None
    for line in lines:
        line = line.rstrip("\n")
        match = re.match(r"^(\S+) leaked over (\d+) calls from:$", line)
        if match:
            if entry:
                yield entry
            size = re.match(r"([\d.]+)([BKMG])", match.group(1))
            entry = (float(size.group(1)) * UNITS[size.group(2)], int(match.group(2)), [])
            frame = None
            continue
        if entry is None:
            continue
        if line.startswith("      "):
            if frame is not None:
                frame[1].append(line.strip())
        elif line.startswith("    "):
            frame = (line.strip(), [])
            entry[2].append(frame)
        else:
            yield entry
            entry = None
    if entry:
        yield entry


def owner(frames):
    # The Swift runtime's type metadata, made once per type whoever asked first.
    if any("getGenericMetadata" in f or "MetadataCache" in f or "instantiateConcreteTypeFromMangledName" in f for f, _ in frames):
        return "Swift type metadata (once per type)"
    for function, where in frames:
        location = " ".join(where)
        text = function + " " + location
        if PASS_THROUGH.search(location) or STANDARD_LIBRARY.search(function.replace("specialized ", "", 1).lstrip("_")) \
                or STANDARD_LIBRARY.search(function) or function.startswith(("swift_", "_swift", "malloc", "calloc", "realloc", "operator new")):
            continue
        if HARNESS.search(text):
            return "the soak harness"
        source = next((w[3:] for w in where if w.startswith("at ")), "")
        checkout = re.search(r"/checkouts/([^/]+)/", source)
        if checkout:
            return checkout.group(1)
        if re.search(r"/Sources/Courier|/Integrations/[^/]+/Sources/", source):
            return "Courier"
        library = re.search(r"in (?:\S*/)?(lib[\w+-]+)\.so", location)
        if library:
            return library.group(1)
        if not source or "<compiler-generated>" in source:
            # Code in the executable with no source line (a specialisation, a thunk): its
            # caller says whose it is.
            continue
        if "dl-init" in location or "_dl_init" in function:
            return "library initialisers"
        if "pthread_create" in function:
            return "thread stacks"
        return function[:60]
    # Only pass-through frames: named by the innermost library.
    for _, where in frames:
        library = re.search(r"in (?:\S*/)?(lib[\w+-]+)\.so", " ".join(where))
        if library:
            return library.group(1)
    return "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, help="the soak's completed calls, for bytes per call")
    arguments = parser.parse_args()
    totals = collections.Counter()
    sites = collections.defaultdict(collections.Counter)
    for size, calls, frames in parse(sys.stdin):
        who = owner(frames)
        totals[who] += size
        first = next((f for f, w in frames if not PASS_THROUGH.search(" ".join(w))), frames[0][0] if frames else "?")
        sites[who][first[:90]] += size
    print("memory still allocated at exit, by owner (heaptrack):")
    for who, size in totals.most_common():
        per_call = f", {size / arguments.calls:7.1f} B per call" if arguments.calls else ""
        print(f"  {size / 1024:9.1f} KiB{per_call}  {who}")
        for site, bytes_ in sites[who].most_common(3):
            print(f"  {'':9}       {bytes_ / 1024:7.1f} KiB at {site}")
    print(f"  {sum(totals.values()) / 1024:9.1f} KiB in all")


if __name__ == "__main__":
    main()
