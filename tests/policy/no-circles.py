#!/usr/bin/env python3
"""tests/policy/no-circles.py: no two files that call or include each other, however long the loop.

Usage: no-circles.py BUILD_DIR SOURCE_DIR

Calls: every object file the build compiled from engine/ and tools/ is read with nm; a file that leaves a
symbol undefined (U) which another object defines (T, D, B, R) calls that file. Includes: every
`#include "..."` of engine/ and tools/, resolved as the compiler would (the file's folder, engine/src,
engine/include). A strongly connected part of either graph with more than one file is a circle: the files
are listed with the symbols (or includes) that close it, and the exit status is 1. Objects of different
programs are kept apart: a symbol resolves only within the target (CMake's <target>.dir) that uses it or a
library target, which is how the linker sees them too.
"""
import collections
import glob
import os
import re
import subprocess
import sys


def sccs(graph):
    """Tarjan's strongly connected components, iterative (deep graphs need no recursion limit)."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], 0
    for root in list(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = n
        n += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = n
                    n += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def source_of(obj, build):
    """engine/CMakeFiles/hs_run.dir/src/run/ctl.c.o -> engine/src/run/ctl.c"""
    rel = os.path.relpath(obj, build)
    m = re.match(r"(.*?)/CMakeFiles/[^/]+\.dir/(.*)\.o$", rel)
    return os.path.join(m.group(1), m.group(2)) if m else rel


def call_circles(build):
    objs = []
    for top in ("engine", "tools"):
        objs += glob.glob(os.path.join(build, top, "**", "*.o"), recursive=True)
    if not objs:
        print(f"no-circles: no object files under {build}/engine or {build}/tools (build first)", file=sys.stderr)
        sys.exit(2)
    defs = collections.defaultdict(list)  # symbol -> objects defining it
    undef = {o: set() for o in objs}
    # One nm for all (-A: each line starts with "OBJECT: "); in portable format a line is "SYMBOL TYPE ...".
    r = subprocess.run(["nm", "-A", "-P"] + sorted(objs), capture_output=True, text=True)
    if r.returncode != 0:
        print(f"no-circles: nm: {r.stderr.strip()[:2000]}", file=sys.stderr)
        sys.exit(2)
    for line in r.stdout.splitlines():
        obj, _, rest = line.partition(": ")
        p = rest.split()
        if obj not in undef or len(p) < 2:
            continue
        if p[1] in "TDBR":
            defs[p[0]].append(obj)
        elif p[1] == "U":
            undef[obj].add(p[0])

    def target(o):
        m = re.search(r"/CMakeFiles/([^/]+)\.dir/", o)
        return m.group(1) if m else ""

    graph = collections.defaultdict(set)
    why = collections.defaultdict(set)
    for o, us in undef.items():
        for s in us:
            cands = defs.get(s, [])
            # Within one program: prefer the using target's own definition (two programs may each define main
            # helpers of one name); a library's otherwise.
            own = [d for d in cands if target(d) == target(o)]
            for d in own or cands:
                if d != o:
                    graph[o].add(d)
                    why[(o, d)].add(s)
    out = []
    for comp in sccs(graph):
        lines = [f"call circle of {len(comp)} files:"]
        cs = set(comp)
        for a in comp:
            for b in sorted(graph[a] & cs):
                syms = sorted(why[(a, b)])
                more = f" (+{len(syms) - 4} more)" if len(syms) > 4 else ""
                lines.append(f"  {source_of(a, build)} -> {source_of(b, build)}: {', '.join(syms[:4])}{more}")
        out.append("\n".join(lines))
    return out, len(objs)


def include_circles(src):
    files = []
    for top in ("engine", "tools"):
        files += glob.glob(os.path.join(src, top, "**", "*.[ch]"), recursive=True)
    graph = collections.defaultdict(set)
    for f in files:
        with open(f, errors="replace") as fh:
            text = fh.read()
        for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
            for base in (os.path.dirname(f), os.path.join(src, "engine/src"), os.path.join(src, "engine/include")):
                p = os.path.normpath(os.path.join(base, m.group(1)))
                if os.path.exists(p):
                    graph[f].add(p)
                    break
    out = []
    for comp in sccs(graph):
        cs = set(comp)
        lines = [f"include circle of {len(comp)} files:"]
        for a in comp:
            for b in sorted(graph[a] & cs):
                lines.append(f"  {os.path.relpath(a, src)} includes {os.path.relpath(b, src)}")
        out.append("\n".join(lines))
    return out, len(files)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    build, src = sys.argv[1], sys.argv[2]
    calls, n_objs = call_circles(build)
    incs, n_files = include_circles(src)
    for c in calls + incs:
        print(c)
    if calls or incs:
        print(f"no-circles: FAIL: {len(calls)} call circles among {n_objs} objects, {len(incs)} include circles "
              f"among {n_files} files (docs/architecture.md: no two files that call each other)")
        return 1
    print(f"no-circles: ok: no call circle among {n_objs} objects, no include circle among {n_files} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
