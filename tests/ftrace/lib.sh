# lib.sh: what the tracefs engine tests share (sourced): instance locks, starting an engine and finding its run folder.
# The sourcing script defines fail() (prints and exits) before calling these.

# test_setup: tracefs mounted, a fresh scratch folder in $tmp, no engine yet ($epid), and $limit: how long an engine
# may take to start (HS_TEST_START_TIMEOUT s, default 90: sanitizer builds start slowly).
test_setup() {
	tracing=/sys/kernel/tracing
	[[ -d $tracing/instances ]] || mount -t tracefs nodev "$tracing"
	tmp=$(mktemp -d)
	epid=
	limit=${HS_TEST_START_TIMEOUT:-90}
}

# kill_engine: for a cleanup: kills the engine a failing test left running and reaps it.
kill_engine() { [[ -n ${epid:-} ]] && { kill -9 "$epid" 2>/dev/null; wait "$epid" 2>/dev/null; }; epid=; }

# True while a live engine holds the instance's lock (/run/hindsight/<name>.lock): not ours to remove.
held() { local l=/run/hindsight/$1.lock; [[ -f $l ]] && grep -q ":$(stat -c %i "$l") " /proc/locks; }

# Removes the tracefs instances named in the arguments that no live engine holds.
remove_instances() {
	local t=/sys/kernel/tracing/instances i
	for i in "$@"; do [[ -d $t/$i ]] && ! held "$i" && rmdir "$t/$i"; done
}

# start_engine OUT ENGINE ARGS...: starts the engine in the background with its output in OUT and waits until it
# records (HS_TEST_START_TIMEOUT s, default 90: sanitizer builds start slowly). Sets epid and dir (its run folder).
start_engine() {
	local out=$1 engine=$2 limit=${HS_TEST_START_TIMEOUT:-90}
	shift 2
	"$engine" "$@" >"$out" 2>&1 &
	epid=$!
	for _ in $(seq $((limit * 10))); do
		grep -q '^engine: recording' "$out" && break
		kill -0 "$epid" 2>/dev/null || fail "engine exited early"
		sleep 0.1
	done
	grep -q '^engine: recording' "$out" || fail "engine did not start recording within $limit s"
	dir=$(sed -n 's/^engine: run folder \(.*\) (pid.*/\1/p' "$out")
	[[ -d $dir ]] || fail "no run folder"
}

# How many snapshot folders of trigger $1 the run folder ($dir) has.
snapshot_folders() { ls -d "$dir"/snapshots/[0-9]*-"$1" 2>/dev/null | wc -l; }

# wait_snapshots N SECS TRIGGER: waits until the run has N folders of TRIGGER; 1 after SECS s. The engine must live.
wait_snapshots() {
	local n=$1 secs=$2 trig=$3
	for _ in $(seq $((secs * 10))); do
		(($(snapshot_folders "$trig") >= n)) && return 0
		kill -0 "$epid" 2>/dev/null || fail "engine exited while waiting for a $trig snapshot"
		sleep 0.1
	done
	return 1
}
