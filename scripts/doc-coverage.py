#!/usr/bin/env python3
"""Every public declaration documented, on the declaration it documents.

Reads the symbol graphs `swift package dump-symbol-graph` wrote (scripts/check-docs runs it) and
fails, naming file and line, when a public declaration of one of the given modules:
- has no `///` comment of its own (declarations the compiler synthesizes, such as `hashValue` or a
  literal initialiser, and those that inherit the documentation of a standard-library protocol
  they implement, are left out: DocC shows the protocol's);
- shows a comment written for another declaration: one inherited from a protocol of the same
  module (write its own), a `- Parameter` that names no parameter of the declaration, parameters
  documented only in part, or a `- Returns:` on a declaration that returns nothing.

    python3 scripts/doc-coverage.py SYMBOLGRAPH-DIR MODULE...
"""
import json
import pathlib
import re
import sys

graphs = pathlib.Path(sys.argv[1])
modules = sys.argv[2:]
parameter_line = re.compile(r"^\s*-\s+Parameter\s+([A-Za-z_][A-Za-z0-9_]*)\s*:")
parameters_header = re.compile(r"^\s*-\s+Parameters\s*:")
parameters_item = re.compile(r"^\s+-\s+([A-Za-z_][A-Za-z0-9_]*)\s*:")
returns_line = re.compile(r"^\s*-\s+Returns\s*:")
problems = []
checked = 0


def where(symbol):
    location = symbol.get("location") or {}
    uri = location.get("uri", "")
    path = uri.removeprefix("file://")
    try:
        path = str(pathlib.Path(path).relative_to(pathlib.Path.cwd()))
    except ValueError:
        pass
    line = (location.get("position") or {}).get("line", -1) + 1
    return f"{path}:{line}"


def documented_parameters(lines):
    names = []
    in_list = False
    for text in lines:
        if parameters_header.match(text):
            in_list = True
            continue
        match = parameter_line.match(text)
        if match:
            names.append(match.group(1))
            in_list = False
            continue
        if in_list:
            item = parameters_item.match(text)
            if item:
                names.append(item.group(1))
            elif text.strip().startswith("- ") and not text.startswith("  "):
                in_list = False
    return names


def returns_nothing(signature):
    returns = signature.get("returns") or []
    spelled = "".join(fragment.get("spelling", "") for fragment in returns).strip()
    return spelled in ("", "()", "Void")


for module in modules:
    files = [graphs / f"{module}.symbols.json"] + sorted(graphs.glob(f"{module}@*.symbols.json"))
    for file in files:
        if not file.exists():
            continue
        for symbol in json.loads(file.read_text())["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            precise = symbol["identifier"]["precise"]
            name = ".".join(symbol["pathComponents"])
            if "::SYNTHESIZED::" in precise or symbol["pathComponents"][-1].startswith("$"):
                continue
            if symbol.get("spi") or symbol["kind"]["identifier"] == "swift.extension":
                continue  # SPI is not API; an extension block is not a declaration of its own
            checked += 1
            comment = symbol.get("docComment")
            if not comment:
                problems.append(f"{where(symbol)}: {module}.{name} is public and has no /// documentation")
                continue
            if comment.get("module") not in (None, module):
                continue  # a standard-library or Foundation protocol's own documentation
            own_file = (symbol.get("location") or {}).get("uri")
            if comment.get("uri") and own_file and comment["uri"] != own_file:
                problems.append(f"{where(symbol)}: {module}.{name} shows documentation written in {comment['uri'].rsplit('/', 1)[-1]}; give it its own")
                continue
            lines = [line.get("text", "") for line in comment.get("lines", [])]
            signature = symbol.get("functionSignature")
            if signature is None:
                continue
            actual = [parameter.get("internalName", parameter["name"]) for parameter in signature.get("parameters") or []]
            named = documented_parameters(lines)
            stray = [parameter for parameter in named if parameter not in actual]
            if stray:
                problems.append(f"{where(symbol)}: {module}.{name} documents {', '.join(stray)}, which it does not have")
            elif named and set(named) != set(actual):
                missing = [parameter for parameter in actual if parameter not in named]
                problems.append(f"{where(symbol)}: {module}.{name} documents some parameters but not {', '.join(missing)}")
            if any(returns_line.match(text) for text in lines) and returns_nothing(signature) and symbol["kind"]["identifier"] not in ("swift.init",):
                problems.append(f"{where(symbol)}: {module}.{name} documents a return value but returns nothing")

for problem in sorted(set(problems)):
    print(problem)
if problems:
    print(f"doc-coverage: {len(set(problems))} problems in {checked} public declarations of {', '.join(modules)}", file=sys.stderr)
    sys.exit(1)
print(f"doc-coverage: {checked} public declarations of {', '.join(modules)}, each documented on itself", file=sys.stderr)
