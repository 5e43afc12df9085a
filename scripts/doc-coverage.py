#!/usr/bin/env python3
"""Lists the public declarations of the library modules that have no doc comment, from the symbol graphs that
`swift package dump-symbol-graph --minimum-access-level public` writes, and prints the share documented.

    swift package dump-symbol-graph --minimum-access-level public
    scripts/doc-coverage.py [MODULE ...]        # exit 1 when any public declaration lacks a doc comment

A declaration counts as documented when it has its own doc comment, or when it implements a protocol requirement
or overrides a declaration that has one (the symbol graph then gives the inherited comment's source).

Symbols without a source location are skipped, counted neither way: the compiler synthesized them (`hashValue`
and `hash(into:)` of a Hashable enum, `init(rawValue:)`, `!=`) or they are a standard-library protocol's members
that a conforming type inherits (`Collection.map`); there is no line to write their comment on.
"""
import glob, json, os, sys

LIBRARIES = ["SuggestCore", "SuggestShare", "SuggestSQLiteStore", "Suggest", "SuggestEval", "SuggestRedisStore",
             "RedisCluster", "HTTPServer", "SuggestServer", "SuggestCLI"]

def main():
    wanted = sys.argv[1:] or LIBRARIES
    graphs = glob.glob(".build/*/symbolgraph/*.symbols.json")
    missing, total = [], 0
    for path in sorted(graphs):
        module = os.path.basename(path).split(".")[0].split("@")[0]
        if module not in wanted:
            continue
        data = json.load(open(path))
        # Requirements a symbol fulfils: their docs count for it.
        implements = {rel["source"] for rel in data.get("relationships", [])
                      if rel["kind"] in ("requirementOf", "defaultImplementationOf", "overrides")}
        for symbol in data["symbols"]:
            kind = symbol["kind"]["identifier"]
            if kind.endswith("extension") or symbol.get("accessLevel") not in ("public", "open"):
                continue
            if "location" not in symbol:
                continue
            if "sourceOrigin" in symbol.get("docComment", {}) or symbol["identifier"]["precise"] in implements:
                continue
            total += 1
            if not symbol.get("docComment", {}).get("lines"):
                location = symbol["location"]
                file = location["uri"].split("/Sources/")[-1]
                line = location.get("position", {}).get("line", 0) + 1
                missing.append(f"{module}: {'.'.join(symbol['pathComponents'])} ({kind.split('.')[-1]}) at {file}:{line}")
    for entry in missing:
        print(entry)
    documented = total - len(missing)
    print(f"{documented} of {total} public declarations documented ({100 * documented // max(total, 1)}%)")
    return 1 if missing else 0

if __name__ == "__main__":
    sys.exit(main())
