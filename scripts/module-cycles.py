#!/usr/bin/env python3
"""Which modules of a crate import each other in a circle: the graph of `crate::MODULE`
references between the top-level files of a crate's src/ (default crates/report/src).
A circle means no file of it can change, or be read, alone (issue 61 opened report's).

Each file is a node (lib.rs is the crate root). An edge A -> B means A's non-test
code names `crate::B...` (or `crate::{B, ...}`). A path `crate::ITEM` whose first
segment is not a module resolves to lib.rs (a re-export or an item of the root).
lib.rs's own edges are its `MODULE::` paths outside `mod` declarations.
Excluded: the `#[cfg(test)]` module at a file's end, and comment lines (doc links).
Prints the strongly connected components with more than one file, largest first.

usage: python3 scripts/module-cycles.py [SRC_DIR] [--edges]
"""
import os
import re
import sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
src = args[0] if args else "crates/report/src"
show_edges = "--edges" in sys.argv

files = sorted(f for f in os.listdir(src) if f.endswith(".rs"))
mods = {f[:-3] for f in files}


def code(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^#\[cfg\(test\)\]\s*\n\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", text, re.M)
    if m:
        text = text[: m.start()]
    out = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("//"):
            continue
        # a trailing comment after code, when no string is open at the `//`
        i = line.find("//")
        while i >= 0:
            if line[:i].count('"') % 2 == 0:
                line = line[:i]
                break
            i = line.find("//", i + 2)
        out.append(line)
    return "\n".join(out)


def group_heads(body):
    """First segments of the paths in a `{...}` use group (top level only)."""
    heads, depth, cur = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            heads.append(cur)
            cur = ""
            continue
        if depth == 0:
            cur += ch
    heads.append(cur)
    return [re.match(r"\s*(\w*)", h).group(1) for h in heads if h.strip()]


def matching_brace(text, i):
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text)


graph = {m: set() for m in mods}
for f in files:
    me = f[:-3]
    text = code(os.path.join(src, f))
    targets = []
    for m in re.finditer(r"\bcrate::(\{|\w+)", text):
        if m.group(1) == "{":
            end = matching_brace(text, m.start(1))
            targets += group_heads(text[m.start(1) + 1 : end])
        else:
            targets.append(m.group(1))
    if me == "lib":
        no_decl = re.sub(r"^\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*;", "", text, flags=re.M)
        for m in re.finditer(r"(?<![\w:])(\w+)::", no_decl):
            if m.group(1) in mods:
                targets.append(m.group(1))
    for t in targets:
        dst = t if t in mods else "lib"
        if dst != me:
            graph[me].add(dst)


def tarjan(g):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


sccs = sorted((c for c in tarjan(graph) if len(c) > 1), key=lambda c: (-len(c), c))
if show_edges:
    for a in sorted(graph):
        print(f"{a} -> {', '.join(sorted(graph[a]))}")
    print()
print(f"files: {len(files)}, edges: {sum(len(v) for v in graph.values())}")
print(f"SCCs with more than one file: {len(sccs)}")
for c in sccs:
    print(f"  size {len(c)}: {' '.join(c)}")
print(f"largest SCC: {len(sccs[0]) if sccs else 1}")
