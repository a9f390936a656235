#!/usr/bin/env python3
"""Re-extracts third_party/evtx-etw-resources/winbuilds.psv from a checkout of nasbench/EVTX-ETW-Resources.

For every build asked for and every manifest provider of rules/providers/windows.yaml that has events, it reads
"ETW Events List/CSV/<build>/<provider>.csv" (whichever of the repository's layouts the file has: '|' or ','
separated; only id, channel and message, or also level, version, task, opcode and keywords) and keeps the rows
of the event ids the catalog lists, plus the ids given with --extra PROVIDER:ID (fallback candidates).

usage: extract.py CHECKOUT [--builds W10_1507,W10_20H2,W11_21H2] [--extra Microsoft-Windows-Kernel-PnP:831 ...]
                  [--out FILE]   (default: the repository's winbuilds.psv; '-' for stdout)
Then run gen_table.py to regenerate the C table.
"""
import argparse
import csv
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
# Folder name -> (build number, label). Extend when a newer listing folder appears upstream.
KNOWN = {
    "W10_1507": (10240, "Windows 10 1507"), "W10_1511": (10586, "Windows 10 1511"),
    "W10_1607": (14393, "Windows 10 1607"), "W10_1703": (15063, "Windows 10 1703"),
    "W10_1709": (16299, "Windows 10 1709"), "W10_1803": (17134, "Windows 10 1803"),
    "W10_1809": (17763, "Windows 10 1809"), "W10_1903": (18362, "Windows 10 1903"),
    "W10_1909": (18363, "Windows 10 1909"), "W10_2004": (19041, "Windows 10 2004"),
    "W10_20H2": (19042, "Windows 10 20H2"), "W10_21H1": (19043, "Windows 10 21H1"),
    "W11_21H2": (22000, "Windows 11 21H2"),
}
HEADER = """# Per-Windows-build event listings of the providers hindsight's Windows catalog whitelists, extracted from
# nasbench/EVTX-ETW-Resources (MIT, see LICENSE here), "ETW Events List/CSV/<build>/<provider>.csv".
# Only the rows of event ids rules/providers/windows.yaml lists are kept. Regenerate with
# tools/winbuilds/extract.py (see README.md), then tools/winbuilds/gen_table.py.
#
# B|build|number|label                      a build the extract covers
# P|build|provider|commit|columns           the provider's listing for that build was read (commit of the file);
#                                           columns "id" = the listing has only id, channel and message,
#                                           "full" = it also has level, version, task, opcode and keywords
# E|build|provider|id|rows|versions|level|task|opcode|keywords
#                                           one event id present in that listing; rows = how many rows (one per
#                                           event version) it has; versions, level, task, opcode and keywords
#                                           (space-separated names) only where the listing has them (of the
#                                           highest version). An id a read listing lacks is missing on that build.
"""


def catalog_ids(path):
    """Manifest providers and their event ids, read with regexes (the catalog's flow-style event lines)."""
    out, cur, kind = {}, None, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^  - name: (\S+)", line)
        if m:
            cur, kind = m.group(1), None
            continue
        m = re.match(r"^    kind: (\S+)", line)
        if m and cur:
            kind = m.group(1)
            continue
        m = re.match(r"^      - \{ id: (\d+),", line)
        if m and cur and kind == "manifest":
            out.setdefault(cur, set()).add(int(m.group(1)))
    return out


def read_listing(path):
    raw = open(path, encoding="utf-8", errors="replace").read()
    first = raw.split("\n", 1)[0]
    delim = "|" if "|" in first else ","
    rows = list(csv.reader(raw.splitlines(), delimiter=delim))
    head = [h.strip().lower() for h in rows[0]]
    full = "version" in head and "keyword" in head
    ix = {h: i for i, h in enumerate(head)}
    recs = []
    for r in rows[1:]:
        if len(r) < len(head):
            continue
        rec = {"id": int(r[ix["event id"]])}
        if full:
            for k in ("level", "version", "task", "opcode", "keyword"):
                rec[k] = r[ix[k]].strip()
        recs.append(rec)
    return full, recs


def file_commit(checkout, rel):
    try:
        return subprocess.run(["git", "-C", checkout, "log", "-1", "--format=%H", "--", rel], check=True,
                              capture_output=True, text=True).stdout.strip() or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkout")
    ap.add_argument("--builds", default="W10_1507,W10_2004,W10_20H2,W11_21H2")
    ap.add_argument("--extra", action="append", default=["Microsoft-Windows-Kernel-PnP:830",
                                                         "Microsoft-Windows-Kernel-PnP:831",
                                                         "Microsoft-Windows-Kernel-PnP:832"])
    ap.add_argument("--catalog", default=os.path.join(ROOT, "rules", "providers", "windows.yaml"))
    ap.add_argument("--out", default=os.path.join(ROOT, "third_party", "evtx-etw-resources", "winbuilds.psv"))
    a = ap.parse_args()
    ids = catalog_ids(a.catalog)
    for x in a.extra:
        prov, _, i = x.rpartition(":")
        ids.setdefault(prov, set()).add(int(i))
    lines = [HEADER.rstrip("\n")]
    builds = [b for b in a.builds.split(",") if b]
    for b in builds:
        if b not in KNOWN:
            sys.exit("extract.py: no build number known for folder %s; add it to KNOWN" % b)
        lines.append("B|%s|%d|%s" % (b, KNOWN[b][0], KNOWN[b][1]))
    ev = []
    for b in builds:
        for prov in sorted(ids):
            rel = os.path.join("ETW Events List", "CSV", b, prov + ".csv")
            path = os.path.join(a.checkout, rel)
            if not os.path.exists(path):
                continue  # not listed for this build: coverage stays "unknown", not "missing"
            full, recs = read_listing(path)
            lines.append("P|%s|%s|%s|%s" % (b, prov, file_commit(a.checkout, rel), "full" if full else "id"))
            for i in sorted(ids[prov]):
                mine = [r for r in recs if r["id"] == i]
                if not mine:
                    continue
                if full:
                    mine.sort(key=lambda r: int(r["version"] or 0))
                    top = mine[-1]
                    vers = " ".join(r["version"] for r in mine)
                    ev.append("E|%s|%s|%d|%d|%s|%s|%s|%s|%s" % (b, prov, i, len(mine), vers, top["level"],
                                                              top["task"], top["opcode"], top["keyword"]))
                else:
                    ev.append("E|%s|%s|%d|%d|||||" % (b, prov, i, len(mine)))
    text = "\n".join(lines + ev) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
