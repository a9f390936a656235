#!/usr/bin/env bash
# major-faults.sh: the frame thread reads pages of a mapped file whose page cache the scenario dropped: each page is
# a major fault (MADV_RANDOM: no readahead), for 80-250 ms.
. "$(dirname "$0")/../lib.sh"
[[ $(stat -f -c %T "$work") != tmpfs ]] || lack "$work is a tmpfs: its pages cannot be dropped"
mb=$(rand_int 32 64) ms=$(rand_int 80 250)
f=$work/mapped.bin
at_exit "rm -f '$f'"
head -c $((mb << 20)) /dev/urandom >"$f" && sync "$f" || fail "cannot write $f"
# Only this file's page cache (POSIX_FADV_DONTNEED through dd's nocache flag): drop_caches would evict every
# program's pages on the machine and give the trace other faults than this scenario's.
dd if="$f" iflag=nocache count=0 status=none || fail "cannot drop $f from the page cache"
start_game --inject fault --ms "$ms" --file "$f"
wait_game
injected_by_game
read -r _ _ _ _ pages _ resident < <(grep '^fault file ' "$work/game.out")
read -r _ _ touched _ < <(grep '^fault touched ' "$work/game.out")
((resident * 10 < pages)) || fail "$resident of $pages pages of $f were still cached"
note file "$f $mb MB, $resident of $pages pages cached at the start"
note culprit "the game's own page faults on $f"
note faults "$touched pages touched"
finish fault-io - "frame $plan_frame reads one byte of $touched pages of a $mb MB mmapped file" \
	"dropped from the page cache"
