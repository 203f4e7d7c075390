#!/usr/bin/env python3
"""Merges the symbol graphs of Courier's modules into one graph of the module `Courier`.

`import Courier` is an umbrella: it re-exports CourierCore, CourierCaching, CourierCookies,
CourierResilience, CourierTesting, CourierURLSession and CourierWebSocket and declares nothing itself, so its own
symbol graph is empty. The documentation presents what a user of `import Courier` sees, one
module: this renames the seven modules' graphs (and their extension graphs
of each other) to `Courier` and joins them, so that DocC links between them resolve.

Usage: merge-symbol-graphs.py SOURCE_DIR OUTPUT_DIR
"""
import json
import os
import sys

MODULES = ["CourierCore", "CourierCaching", "CourierCookies", "CourierResilience", "CourierTesting", "CourierURLSession", "CourierWebSocket"]
source, output = sys.argv[1], sys.argv[2]
merged = None
extensions = {}
for name in sorted(os.listdir(source)):
    if not name.endswith(".symbols.json"):
        continue
    module, _, extended = name[: -len(".symbols.json")].partition("@")
    if module not in MODULES:
        continue
    with open(os.path.join(source, name)) as handle:
        graph = json.load(handle)
    if extended and extended not in MODULES:
        # Extensions of another module's types (Swift, Foundation): kept, as Courier's.
        graph["module"]["name"] = "Courier"
        extensions.setdefault(extended, []).append(graph)
        continue
    graph["module"]["name"] = "Courier"
    if merged is None:
        merged = graph
    else:
        merged["symbols"] += graph["symbols"]
        merged["relationships"] += graph["relationships"]
if merged is None:
    sys.exit("merge-symbol-graphs: no CourierCore symbol graph in " + source)
os.makedirs(output, exist_ok=True)
with open(os.path.join(output, "Courier.symbols.json"), "w") as handle:
    json.dump(merged, handle)
for extended, graphs in extensions.items():
    combined = graphs[0]
    for graph in graphs[1:]:
        combined["symbols"] += graph["symbols"]
        combined["relationships"] += graph["relationships"]
    with open(os.path.join(output, "Courier@" + extended + ".symbols.json"), "w") as handle:
        json.dump(combined, handle)
