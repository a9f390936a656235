#!/usr/bin/env bash
# fsync.sh: the frame thread fsyncs a large file it wrote (not synced) before its first frame.
. "$(dirname "$0")/../lib.sh"
[[ $(stat -f -c %T "$work") != tmpfs ]] || lack "$work is a tmpfs: fsync would not wait for a disk"
mb=$(rand_int 140 380)
at_exit "rm -f '$work/fsync.bin'"
start_game --inject fsync --mb "$mb" --file "$work/fsync.bin"
wait_game
injected_by_game
rm -f "$work/fsync.bin"
note file "$work/fsync.bin on $(df --output=source "$work" | tail -1)"
note culprit "the game's own fsync"
note expect_culprit_what "disk"
note expect_what "fsync"
finish io-wait - "fsync of $mb MB written just before (dirty) on the frame thread in frame $plan_frame"
