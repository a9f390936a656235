#!/usr/bin/env bash
# catalog-sync-check.sh: the shipped field lists (rules/providers/linux-formats.yaml) are what this kernel's format files say.
# usage: catalog-sync-check.sh CATALOG_SYNC RULECHECK ENGINE REPO   (root: reads /sys/kernel/tracing/events)
# The file records the kernel release it was read on ("kernel:"); that line is the one thing
# another build of the kernel always changes, so the comparison sets it aside (--kernel with the
# recorded release) and compares every field of every event. On the recorded release any
# difference fails. On another release a difference fails when it touches what the rules use:
# an event a profile enables (the engine and the report decode all of its fields), or any field
# a filter, trigger condition, regex target or story names (rulecheck --strict against this
# kernel's lists); a difference in an event no profile records is printed and passes. A crash,
# a usage error or an unreadable tracefs (catalog-sync exit >= 2) always fails: nothing skips.
set -uo pipefail
sync=$1 rulecheck=$2 engine=$3 repo=$4
file=$repo/rules/providers/linux-formats.yaml
fail() { echo "FAIL catalog_sync: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[[ -d /sys/kernel/tracing/events ]] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
rel=$(sed -n 's/^  kernel: "\(.*\)"$/\1/p' "$file")
[[ -n $rel ]] || fail "$file records no 'kernel:' release"
here=$(uname -r)

"$sync" "$repo/rules/providers/linux.yaml" --kernel "$rel" --check "$file" >"$tmp/check.txt" 2>&1
rc=$?
cat "$tmp/check.txt"
((rc == 0)) && { echo "catalog_sync: every field matches (recorded on $rel, this is $here)"; exit 0; }
((rc == 1)) || fail "catalog-sync --check exited $rc (a crash, a usage error or no readable tracefs)"
[[ $rel == "$here" ]] && fail "the fields differ from what this kernel ($here, the recorded release) says"
echo "catalog_sync: recorded on $rel, this is $here: the fields above differ; checking what the rules use"

# The events the profiles enable on Linux, as SYSTEM/EVENT, from their plans.
: >"$tmp/used"
for p in "$repo"/rules/*.yaml; do
	grep -q '^kind: profile' "$p" || continue
	"$engine" --rules "$p" --plan --platform linux >"$tmp/plan" 2>&1 || fail "engine --plan on $p: $(tail -3 "$tmp/plan")"
	# "enable 4 events of sched:" lists them; "enable sched/* (every event of the system)" is the whole system.
	awk '/^  enable [0-9]+ events? of [A-Za-z0-9_]+:$/ { sys = $NF; sub(/:$/, "", sys); next }
	     /^  enable [A-Za-z0-9_]+\/\* / { print $2; sys = ""; next }
	     /^  [^ ]/ { sys = "" }
	     sys != "" && /^      [A-Za-z0-9_]+ / { print sys "/" $1 }' "$tmp/plan" >>"$tmp/used"
done
sort -u -o "$tmp/used" "$tmp/used"
(($(wc -l <"$tmp/used") > 20)) || fail "read only $(wc -l <"$tmp/used") enabled events from the profiles' plans"
bad=0
while read -r ev; do
	if grep -qE "^(kernel has, file lacks|file has, kernel lacks): +(# +)?${ev/%\*/[A-Za-z0-9_]+}[: ]" "$tmp/check.txt"; then
		echo "FAIL: $ev is recorded by the rules and its fields differ on this kernel"
		bad=1
	fi
done <"$tmp/used"

# Every field the rules name, checked against this kernel's lists.
cp -r "$repo/rules" "$tmp/rules"
"$sync" "$repo/rules/providers/linux.yaml" --kernel "$rel" -o "$tmp/rules/providers/linux-formats.yaml" ||
	fail "catalog-sync could not write this kernel's lists"
for p in "$tmp"/rules/*.yaml; do
	grep -q '^kind: profile' "$p" || continue
	"$rulecheck" --strict --quiet "$p" || { echo "FAIL: ${p##*/} does not check against this kernel's fields"; bad=1; }
done
((bad == 0)) || fail "run catalog-sync on this kernel (tools/catalogsync) and read the diff"
echo "catalog_sync: what the rules use ($(wc -l <"$tmp/used") enabled events or whole systems, every field they name) matches; the other differences are in events no profile records"
