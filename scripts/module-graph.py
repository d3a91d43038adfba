#!/usr/bin/env python3
"""The module graph of Tabula's crate, read from its `use` paths, and a check of its layers.

    scripts/module-graph.py              # the top-level modules and the arrows between them
    scripts/module-graph.py service      # the files of src/service/ and the arrows between them
    scripts/module-graph.py --dot [service]   # the same as Graphviz DOT
    scripts/module-graph.py --check      # fails (exit 1) on any arrow that points up a layer

No module may be on a cycle, and an arrow A -> B means code in A names `crate::B` (or `super::B` inside service/). Test modules
(`#[cfg(test)] mod tests` at the end of a file), comments and doc comments are not read: they may
name anything. `mod.rs` files that only declare modules and re-export are not sources of arrows.

The layers are the ones ARCHITECTURE.md draws; an arrow may only point to a lower layer (or
sideways inside a layer where LAYERS says so). Needs only Python 3.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

# Top-level modules, from the top down. Within one group arrows are allowed both ways only where
# the group is marked sideways; the utilities at the bottom are what any floor may use.
TOP_LAYERS = [
    ("binary", ["main"], False),
    ("composition root", ["app"], False),
    ("flags", ["config"], False),
    ("clients", ["cli"], False),
    ("server", ["server"], False),
    ("service", ["service"], False),
    ("archive", ["archive"], False),
    ("hosting and store", ["hosting", "store"], False),
    ("words", ["narration"], False),
    ("bots", ["bots"], False),
    ("engines", ["games"], False),
    ("utilities", ["telemetry", "shutdown", "metrics", "outage", "json", "address", "durations",
                   "signing", "chain",
                   "coalesce", "proto"], True),
]

SERVICE_LAYERS = [
    ("adapters", ["grpc"], False),
    ("workers' handle", ["workers"], False),
    ("streams of streams", ["observe_games"], False),
    ("sessions over handlers", ["play"], False),
    ("handlers and workers", ["act", "create_game", "observe", "get_view", "export_log",
                              "verify_log", "replay_log", "list_games", "count_games", "end_game",
                              "hand_seat_to_bot", "tenant_admin", "bots", "sweeper",
                              "retention", "export_log_unredacted", "webhook_admin",
                              "webhook_delivery", "list_turns", "watch_events",
                              "get_signing_keys", "join_game", "fill_open_seats", "rematch"], False),
    ("the exported log", ["game_log"], False),
    ("server entries", ["table_entry", "new_game"], False),
    ("commit path and log verifier", ["commit", "verify"], False),
    ("provenance", ["provenance"], False),
    ("core", ["tabula"], False),
    ("shared parts", ["disclosure", "auth", "operator", "players", "options", "lag", "stop",
                      "observer", "listing", "tenants", "quotas", "webhooks", "commitment", "delay",
                      "seating", "creation", "narration", "entries_told",
                      "webhook_forgetting"],
     True),
    ("game cache", ["cache"], False),
    ("errors", ["error"], False),
]

USE_CRATE = re.compile(r"(?<![:\w])crate::(\{[^;]*?\}|[a-z_][a-z0-9_]*)", re.S)
# The binary (main.rs) names the library by its crate name.
USE_LIBRARY = re.compile(r"(?<![:\w])tabula::(\{[^;]*?\}|[a-z_][a-z0-9_]*)", re.S)
USE_SUPER = re.compile(r"\bsuper::(\{[^;]*?\}|[a-z_][a-z0-9_]*)", re.S)


def code_of(path):
    """The file's code without comments and without its trailing test module."""
    text = open(path, encoding="utf-8").read()
    cut = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod tests", text, re.M)
    if cut:
        text = text[: cut.start()]
    text = re.sub(r"//[^\n]*", "", text)
    return text


def names_in(group):
    """The first path segments named by `{a, b::c, self}` or a plain `a`."""
    if not group.startswith("{"):
        return [group]
    inner, depth, names, current = group[1:-1], 0, [], ""
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            names.append(current)
            current = ""
        else:
            current += ch
    names.append(current)
    return [n.strip().split("::")[0].split(" ")[0] for n in names if n.strip()]


def top_level_graph():
    edges = set()
    for dirpath, _, files in os.walk(ROOT):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, ROOT)
            source = rel.split(os.sep)[0].removesuffix(".rs")
            if source == "lib" or name == "tests.rs" or "tests" in rel.split(os.sep)[:-1]:
                continue
            pattern = USE_LIBRARY if source == "main" else USE_CRATE
            for group in pattern.findall(code_of(path)):
                for target in names_in(group):
                    if target not in ("self", "") and target != source:
                        edges.add((source, target))
    return edges


def service_graph():
    edges = set()
    folder = os.path.join(ROOT, "service")
    for name in os.listdir(folder):
        if not name.endswith(".rs") or name == "mod.rs":
            continue
        source = name.removesuffix(".rs")
        for group in USE_SUPER.findall(code_of(os.path.join(folder, name))):
            for target in names_in(group):
                if target not in ("self", "") and target != source:
                    edges.add((source, target))
    return edges


def cycles(edges):
    """Every module on a cycle of arrows (a sideways group may not hide one)."""
    targets = {}
    for source, target in edges:
        targets.setdefault(source, set()).add(target)
    on_cycle = set()
    for start in targets:
        stack, seen = [start], set()
        while stack:
            node = stack.pop()
            for nxt in targets.get(node, ()):
                if nxt == start:
                    on_cycle.add(start)
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    return sorted(on_cycle)


def check(edges, layers):
    rank, sideways = {}, {}
    for index, (_, members, side) in enumerate(layers):
        for member in members:
            rank[member] = index
            sideways[member] = side
    problems = [f"{module}: on a cycle of arrows" for module in cycles(edges)]
    for source, target in sorted(edges):
        if source not in rank or target not in rank:
            problems.append(f"{source} -> {target}: a module the layers do not name")
        elif rank[target] < rank[source]:
            problems.append(f"{source} -> {target}: points up, from {layers[rank[source]][0]} "
                            f"to {layers[rank[target]][0]}")
        elif rank[target] == rank[source] and not sideways[source]:
            problems.append(f"{source} -> {target}: sideways inside {layers[rank[source]][0]}")
    return problems


def show(edges, layers, dot):
    if dot:
        print("digraph modules {\n  rankdir=TB; node [shape=box];")
        for source, target in sorted(edges):
            print(f'  "{source}" -> "{target}";')
        print("}")
        return
    for title, members, _ in layers:
        print(f"{title}:")
        for member in members:
            targets = sorted(t for s, t in edges if s == member)
            print(f"  {member} -> {', '.join(targets) if targets else '(nothing)'}")


def main(args):
    dot = "--dot" in args
    want_check = "--check" in args
    scopes = [a for a in args if not a.startswith("--")] or ["top"]
    failed = False
    for scope in (["top", "service"] if want_check else scopes):
        edges, layers = (service_graph(), SERVICE_LAYERS) if scope == "service" else (
            top_level_graph(), TOP_LAYERS)
        if want_check:
            problems = check(edges, layers)
            for problem in problems:
                print(f"{scope}: {problem}", file=sys.stderr)
            failed |= bool(problems)
        else:
            show(edges, layers, dot)
    if want_check:
        print("module layers: " + ("arrows point up (see above)" if failed else "every arrow points down"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
