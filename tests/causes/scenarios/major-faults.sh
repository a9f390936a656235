#!/usr/bin/env bash
# major-faults.sh: the frame thread reads one byte of random pages of a mapped file whose page cache the scenario dropped, from a disk as slow as a hard disk for the game (a blkio cgroup: 100-250 reads/s), for 100-200 ms: each page is one major fault and one 4 KB read.
# Why the slow disk: this VM's virtio disk answers a 4 KB read in 30-250 us (the host caches the file just written),
# and under stress-ng each fault's wake-up then waited longer for the CPU than its read took: a 93.8 ms frame of 442
# faults was 49 ms runnable behind stress-ng, 28 ms the fault path's own CPU and 16.5 ms fault I/O. Bigger reads do
# not change that ratio enough: 2 MB a fault (MADV_HUGEPAGE) gave 77 % fault I/O beside stress-ng alone but 52-54 %
# with builds beside it too (the host reads 1.2-4.3 GB/s, ~0.5 ms a fault against 0.2-0.35 ms of waiting for the
# CPU after each), and a 450-580 MB file took 17-20 s to write. A hard disk's random read (4-10 ms) is where major
# faults make a frame long; blkio.throttle.read_iops_device gives the game one, whatever the host.
. "$(dirname "$0")/../lib.sh"
[[ $(stat -f -c %T "$work") != tmpfs ]] || lack "$work is a tmpfs: its pages cannot be dropped"
root=/sys/fs/cgroup/blkio
[[ -f $root/blkio.throttle.read_iops_device ]] || lack "no cgroup v1 blkio controller with throttling at $root"
mb=$(rand_int 32 64) ms=$(rand_int 100 200) iops=$(rand_int 100 250)
f=$work/mapped.bin
at_exit "rm -f '$f'"
head -c $((mb << 20)) /dev/urandom >"$f" && sync "$f" || fail "cannot write $f"
# The limit is the disk's (a partition's file system: its disk's major:minor, as blk-throttle wants).
dev=$(stat -c '%Hd:%Ld' "$f")
[[ -e /sys/dev/block/$dev ]] || lack "$f is on no block device (dev $dev)"
[[ -e /sys/dev/block/$dev/partition ]] && dev=$(cat "/sys/dev/block/$dev/../dev")
cg=$root/$(rand_name)
mkdir "$cg" || fail "cannot create $cg"
at_exit "while read -r p; do kill -9 \$p; done <'$cg/cgroup.procs'; sleep 0.1; rmdir '$cg'"
echo "$dev $iops" >"$cg/blkio.throttle.read_iops_device" || fail "cannot limit $cg to $iops reads/s on $dev"
# Only this file's page cache (POSIX_FADV_DONTNEED through dd's nocache flag): drop_caches would evict every
# program's pages on the machine and give the trace other faults than this scenario's.
dd if="$f" iflag=nocache count=0 status=none || fail "cannot drop $f from the page cache"
start_game --cgroup "$cg" --inject fault --ms "$ms" --file "$f"
wait_game
injected_by_game
read -r _ _ _ _ pages _ resident _ < <(grep '^fault file ' "$work/game.out")
read -r _ _ touched _ < <(grep '^fault touched ' "$work/game.out")
read -r _ _ reads < <(grep "^$dev Read " "$cg/blkio.throttle.io_serviced")
((resident * 10 < pages)) || fail "$resident of $pages pages of $f were still cached"
note file "$f $mb MB, $resident of $pages pages cached at the start"
note cgroup "${cg#/sys/fs/cgroup/} blkio.throttle.read_iops_device $dev $iops (${reads:-?} reads by the game)"
note culprit "the game's own page faults on $f"
note faults "$touched pages touched"
note expect_culprit_what "disk"
note expect_what "inode $(stat -c %i "$f")\\b"
finish fault-io - "frame $plan_frame reads one byte of $touched pages of a $mb MB mmapped file dropped from the" \
	"page cache (MADV_RANDOM: one 4 KB read a fault) on a disk limited to $iops reads/s for the game"
