#!/usr/bin/env bash
# filter-agree.sh: rulecheck's offline filter check agrees with the kernel on a corpus of right and wrong filters.
# usage: filter-agree.sh RULECHECK REPO [--kernel]
# Each line of filter-corpus.tsv says whether the reference kernel took the
# filter. Offline (no root): rulecheck must pass exactly the 'ok' ones and
# refuse the 'refused' ones with HS140-HS142. With --kernel (root, tracefs):
# the running kernel must also give the recorded verdicts, written into a
# private instance's event filter files, so the corpus stays the kernel's word.
set -uo pipefail
rulecheck=$1 repo=$2 mode=${3:-}
corpus=$repo/tests/rules/filter-corpus.tsv
tmp=$(mktemp -d)
inst=/sys/kernel/tracing/instances/hindsight_test_filt
cleanup() { [[ $mode == --kernel && -d $inst ]] && rmdir "$inst"; rm -rf "$tmp"; }
trap cleanup EXIT
if [[ $mode == --kernel ]]; then
	[[ $(id -u) == 0 ]] || { echo "filter-agree: --kernel needs root"; exit 1; }
	[[ -d /sys/kernel/tracing/instances ]] || mount -t tracefs nodev /sys/kernel/tracing
	mkdir "$inst" || exit 1
fi
cp -r "$repo/rules/providers" "$tmp/providers"
bad=0 n=0
while IFS=$'\t' read -r verdict ev filter; do
	[[ -z $verdict || $verdict == \#* ]] && continue
	n=$((n + 1))
	sys=${ev%%/*} name=${ev#*/}
	if [[ $mode == --kernel ]]; then
		if printf '%s\n' "$filter" >"$inst/events/$ev/filter" 2>/dev/null; then k=ok; else k=refused; fi
		echo 0 >"$inst/events/$ev/filter" 2>/dev/null
		if [[ $k != "$verdict" ]]; then
			echo "filter-agree: the kernel says $k, the corpus $verdict: $ev: $filter"
			bad=1
		fi
		continue
	fi
	# The filter as a YAML single-quoted scalar ('' for ').
	q=${filter//\'/\'\'}
	cat >"$tmp/p.yaml" <<YAML
schema_version: 1
kind: profile
name: filter-agree
include: [providers/linux.yaml]
platforms:
  linux:
    sessions:
      - name: keys
        logger_name: hindsight_test_filt
        mode: file-circular
        clock: mono
        buffer_size_kb: 256
        max_file_mb: 16
        output: keys.dat
        providers:
          - provider: $sys
            events:
              - name: $name
                filter: '$q'
YAML
	out=$("$rulecheck" --strict "$tmp/p.yaml" 2>&1)
	rc=$?
	if [[ $verdict == ok && $rc != 0 ]]; then
		echo "filter-agree: rulecheck refuses what the kernel takes: $ev: $filter"
		echo "$out" | sed 's/^/    /'
		bad=1
	elif [[ $verdict == refused ]] && ! grep -qE 'error\[HS14[0-2]\]' <<<"$out"; then
		echo "filter-agree: rulecheck passes what the kernel refuses: $ev: $filter"
		echo "$out" | sed 's/^/    /'
		bad=1
	fi
done <"$corpus"
((n > 40)) || { echo "filter-agree: only $n cases in $corpus"; exit 1; }
[[ $bad == 0 ]] && echo "filter-agree: $n filters agree${mode:+ (kernel)}"
exit $bad
