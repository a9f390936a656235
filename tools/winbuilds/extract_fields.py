#!/usr/bin/env python3
"""Re-extracts the template fields of rules/providers/windows-formats.yaml from Windows provider manifest dumps.

For every event of rules/providers/windows.yaml that carries `alert:` or `means:` (the events the shipped triggers
and readers depend on), it finds the event in the manifest given for its provider and writes each template
version's fields as `name: [inType, size, signed]` (size 0 for variable-size types, signed 1 for win:IntN).
When every version has the same fields the entry is `Provider/id`; otherwise there is one `Provider/id/vN` per
version. Three layouts are read: the instrumentationManifest XML (events refer to <template tid=...>), the
WEPExplorer layout (<Event><Id>/<Version> with the template inline in <Template>), and the C++ headers PresentMon's
etw_list generated from a manifest with --show=all (EVENT_DESCRIPTOR_DECL(name, id, version, ...) and a
`name_Struct` per event: the C types are mapped back to inTypes, uint32_t -> win:UInt32 (a win:HexInt32 reads and
compares the same), PointerT -> win:Pointer; an event with any other member type is left out).

usage: extract_fields.py --manifest PROVIDER=FILE[=LABEL] ... [--out FILE]   (default: stdout)
  LABEL says where FILE came from (e.g. "nasbench 21H1 Microsoft-Windows-Kernel-Process.manifest.xml @14c2acc");
  it becomes the comment above the provider's entries. Events whose provider has no --manifest are listed in a
  comment as "no manifest read"; Hindsight-Marker is written from how the engine writes it (EventWriteString).
"""
import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CATALOG = os.path.join(ROOT, "rules", "providers", "windows.yaml")
# Bytes in the record per fixed-size inType; anything else (strings, SIDs, binaries, pointers whose size is the
# writer's bitness) is 0, "variable".
SIZES = {"win:Int8": 1, "win:UInt8": 1, "win:Int16": 2, "win:UInt16": 2, "win:Int32": 4, "win:UInt32": 4,
         "win:Int64": 8, "win:UInt64": 8, "win:Float": 4, "win:Double": 8, "win:Boolean": 4, "win:HexInt32": 4,
         "win:HexInt64": 8, "win:FILETIME": 8, "win:SYSTEMTIME": 16, "win:GUID": 16}
SIGNED = {"win:Int8", "win:Int16", "win:Int32", "win:Int64", "win:Float", "win:Double"}
MARKER = "Hindsight-Marker"


def catalog_events(path):
    """(provider, id, name) of every catalog event with alert: or means:, in file order."""
    out, prov = [], None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"\s*- name: (\S+)\s*$", line)
        if m:
            prov = m.group(1)
            continue
        m = re.match(r"\s*- \{ id: (\d+), name: (\w+),(.*)", line)
        if m and prov and re.search(r"\b(alert|means): ", m.group(3)):
            out.append((prov, int(m.group(1)), m.group(2)))
    return out


def local(tag):
    return tag.rsplit("}", 1)[-1]


def fields_of(template):
    return [(d.get("name"), d.get("inType")) for d in template.iter() if local(d.tag) == "data"]


CTYPES = {"PointerT": "win:Pointer", "uint8_t": "win:UInt8", "uint16_t": "win:UInt16", "uint32_t": "win:UInt32",
          "uint64_t": "win:UInt64", "int8_t": "win:Int8", "int16_t": "win:Int16", "int32_t": "win:Int32",
          "int64_t": "win:Int64"}


def read_etw_list_header(path):
    """{id: {version: [(name, inType)]}} from a PresentMon etw_list header."""
    text = open(path, encoding="utf-8").read()
    desc = {m.group(1): (int(m.group(2), 16), int(m.group(3), 16)) for m in
            re.finditer(r"EVENT_DESCRIPTOR_DECL\((\w+)\s*,\s*(0x[0-9a-fA-F]+),\s*(0x[0-9a-fA-F]+),", text)}
    events = {}
    for m in re.finditer(r"struct (\w+)_Struct \{(.*?)\};", text, re.S):
        if m.group(1) not in desc:
            continue
        fields = []
        for line in m.group(2).strip().splitlines():
            f = re.match(r"\s*(\w+)\s+(\w+);\s*$", line)
            if not f or f.group(1) not in CTYPES:
                fields = None
                break
            fields.append((f.group(2), CTYPES[f.group(1)]))
        if fields:
            eid, ver = desc[m.group(1)]
            events.setdefault(eid, {})[ver] = fields
    return events


def read_manifest(path):
    """{id: {version: [(name, inType)]}} from any of the three layouts."""
    if path.endswith(".h"):
        return read_etw_list_header(path)
    root = ET.parse(path).getroot()
    events = {}
    if local(root.tag) == "instrumentationManifest":
        templates = {t.get("tid"): fields_of(t) for t in root.iter() if local(t.tag) == "template"}
        for e in root.iter():
            if local(e.tag) == "event" and e.get("value") is not None:
                events.setdefault(int(e.get("value")), {})[int(e.get("version", "0"))] = \
                    templates.get(e.get("template"), [])
        return events
    for e in root.iter():
        if local(e.tag) != "Event":
            continue
        kids = {local(k.tag): k for k in e}
        if "Id" not in kids:
            continue
        t = (kids.get("Template").text or "").strip() if "Template" in kids else ""
        fl = fields_of(ET.fromstring(t)) if t else []
        events.setdefault(int(kids["Id"].text), {})[int(kids["Version"].text or 0)] = fl
    return events


def field_map(fields):
    return "{ " + ", ".join('%s: ["%s", %d, %d]' % (n, t, SIZES.get(t, 0), 1 if t in SIGNED else 0)
                            for n, t in fields) + " }"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--manifest", action="append", default=[], help="PROVIDER=FILE[=LABEL]")
    ap.add_argument("--catalog", default=CATALOG)
    ap.add_argument("--out", default="-")
    a = ap.parse_args()
    manifests = {}
    for m in a.manifest:
        parts = m.split("=", 2)
        if len(parts) < 2:
            sys.exit("--manifest needs PROVIDER=FILE[=LABEL]: " + m)
        manifests[parts[0]] = (read_manifest(parts[1]), parts[2] if len(parts) > 2 else os.path.basename(parts[1]))
    lines = ["# yaml-language-server: $schema=../../schemas/rules.schema.json",
             "# The payload fields of the Windows catalog's key events (the ones with alert: or means:), per",
             "# template version, as the providers' manifests declare them: name: [inType, size, signed], size 0 for",
             "# variable-size types. Written by tools/winbuilds/extract_fields.py from manifest dumps of",
             "# nasbench/EVTX-ETW-Resources (MIT, third_party/evtx-etw-resources/LICENSE) and from PresentMon's",
             "# manifest-generated headers (MIT, third_party/presentmon/LICENSE); the comment above each provider",
             "# names the file read. Do not edit by hand; run the script again and read the diff.",
             "schema_version: 1", "kind: catalog", "platform: windows", "formats:", "  events:"]
    missing, last = [], None
    for prov, eid, name in catalog_events(a.catalog):
        if prov == MARKER:
            lines.append("    # Ours: EventWriteString writes a string-only event, its whole payload one UTF-16 string")
            lines.append("    # (no manifest; the name Text is the rules' name for it).")
            lines.append('    %s/%d: { Text: ["win:UnicodeString", 0, 0] }  # %s' % (prov, eid, name))
            continue
        if prov not in manifests:
            missing.append("%s/%d (%s)" % (prov, eid, name))
            continue
        evs, label = manifests[prov]
        versions = evs.get(eid)
        if not versions:
            missing.append("%s/%d (%s): not in %s" % (prov, eid, name, label))
            continue
        if prov != last:
            lines.append("    # %s: %s" % (prov, label))
            last = prov
        distinct = {tuple(f) for f in versions.values()}
        if len(distinct) == 1:
            lines.append("    %s/%d: %s  # %s, versions %s" % (prov, eid, field_map(next(iter(distinct))), name,
                                                                 ",".join(map(str, sorted(versions)))))
        else:
            for v in sorted(versions):
                lines.append("    %s/%d/v%d: %s  # %s" % (prov, eid, v, field_map(versions[v]), name))
    if missing:
        lines.append("# No template read (rulecheck does not check these events' fields):")
        lines += ["#   " + m for m in missing]
    text = "\n".join(lines) + "\n"
    if a.out == "-":
        sys.stdout.write(text)
    else:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
