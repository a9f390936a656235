#!/usr/bin/env bash
# run-linux.sh: the fault scenarios on Linux: each one recorded by the real engine twice, side by side
# (the profile as it is = "filtered", and its whitelist-free twin = "full"), then its signature checked.
#
# usage: run-linux.sh SCENARIO|all [--short] [--out DIR] [--rules PROFILE] [--engine PATH] [--analyze PATH]
#                     [--build DIR] [--disk-dir DIR] [--keep-snap] [--prune]
#   SCENARIO     baseline cpu_saturation memory_pressure disk_io_spike network_disconnect process_crash
#   --short      5-12 s per scenario instead of 30-50 s (what CTest runs)
#   --out DIR    results go to DIR/<scenario>/ (default: ./scenarios-out); that folder is replaced
#   --rules P    the profile (default: rules/stutter.yaml of this tree)
#   --engine, --analyze
#                the programs (default: BUILD/engine/engine, BUILD/tools/analyze/analyze)
#   --build DIR  the build tree holding engine, rulecheck, analyze and tools/scenarios/hs_* (default: ./build
#                of this tree, or the build tree --engine lives in)
#   --disk-dir D where disk_io_spike makes its temp dir (default: $HS_SCENARIO_DISK_DIR or /var/tmp; not a tmpfs)
#   --keep-snap  keep both captures' ring snapshots (snap.dat; up to 256 MB each) in the run folders
#   --prune      delete full.dat and filtered.dat of a scenario that passed (CI: the counts stay)
#
# Needs root (tracefs, namespaces, cgroups). Every namespace, cgroup, tracefs instance, temp dir and child
# process it makes is removed on every path, Ctrl+C included. What each scenario does and asserts, the
# .counts format and the measured durations: docs/scenarios.md.
#
# Exit status: 0 pass; 1 the signature is missing from the filtered trace (a coverage bug in the rules);
# 2 usage; 3 the scenario itself failed (an engine error, the trigger did not happen, a timeout); 4 not root
# or the machine lacks what the scenario needs. `all` runs every scenario and exits with the worst status.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
all_scenarios=(baseline cpu_saturation memory_pressure disk_io_spike network_disconnect process_crash)
tracing=/sys/kernel/tracing

usage() { sed -n '5,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

scenario='' short=0 out=$PWD/scenarios-out rules=$src/rules/stutter.yaml engine='' analyze='' build='' keep_snap=0 prune=0
disk_dir=${HS_SCENARIO_DISK_DIR:-/var/tmp}
pass_args=()
while (($#)); do
	case $1 in
	--short) short=1 pass_args+=("$1") ;;
	--keep-snap) keep_snap=1 pass_args+=("$1") ;;
	--prune) prune=1 pass_args+=("$1") ;;
	--out | --rules | --engine | --analyze | --build | --disk-dir)
		(($# >= 2)) || { echo "run-linux.sh: $1 needs a value" >&2; exit 2; }
		v=$2
		[[ $1 != --disk-dir && $v != /* ]] && v=$PWD/$v # the engines run in other folders
		case $1 in
		--out) out=$v ;; --rules) rules=$v ;; --engine) engine=$v ;; --analyze) analyze=$v ;;
		--build) build=$v ;; --disk-dir) disk_dir=$v ;;
		esac
		pass_args+=("$1" "$v")
		shift
		;;
	-h | --help) usage; exit 0 ;;
	-*) echo "run-linux.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) [[ -z $scenario ]] || { echo "run-linux.sh: one scenario (or all), not '$1' too" >&2; exit 2; }; scenario=$1 ;;
	esac
	shift
done
[[ -n $scenario ]] || { usage >&2; exit 2; }

# ---- all: each scenario in its own process, so each has its own cleanup ----
if [[ $scenario == all ]]; then
	worst=0 summary=()
	trap 'echo "run-linux.sh: interrupted"; exit 130' INT TERM
	for s in "${all_scenarios[@]}"; do
		t0=$(date +%s.%N)
		"${BASH_SOURCE[0]}" "$s" "${pass_args[@]}"
		rc=$?
		((rc == 130)) && exit 130
		dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
		case $rc in 0) v=PASS ;; 1) v="FAIL (coverage bug in the rules)" ;; *) v="FAIL (scenario error, exit $rc)" ;; esac
		summary+=("$(printf '%-20s %-40s %6s s' "$s" "$v" "$dt")")
		((rc > worst)) && worst=$rc
	done
	echo "== scenarios (out: $out)"
	printf '%s\n' "${summary[@]}"
	exit $worst
fi
printf '%s\n' "${all_scenarios[@]}" | grep -qx -- "$scenario" ||
	{ echo "run-linux.sh: unknown scenario '$scenario' (one of: ${all_scenarios[*]}, all)" >&2; exit 2; }

# ---- tools ----
if [[ -z $build ]]; then
	if [[ -n $engine ]]; then build=$(cd "$(dirname "$engine")/.." && pwd); else build=$src/build; fi
fi
engine=${engine:-$build/engine/engine}
analyze=${analyze:-$build/tools/analyze/analyze}
rulecheck=$build/tools/rulecheck/rulecheck
bin=$build/tools/scenarios
for p in "$engine" "$analyze" "$rulecheck" "$bin"/hs_{fullprofile,crash,load,tcp,sigcheck}; do
	[[ -x $p ]] || { echo "run-linux.sh: $p is missing: build first (cmake --build BUILD), or give --build" >&2; exit 2; }
done
[[ -f $rules ]] || { echo "run-linux.sh: no profile $rules" >&2; exit 2; }
signatures=$here/signatures.yaml

# ---- durations (seconds): warmup, trigger, settle ----
if ((short)); then
	warmup=1 settle=1 mode=short
else
	warmup=5 settle=5 mode=long
fi

dir=$out/$scenario
log() { echo "[$scenario] $*" | tee -a "$dir/scenario.log"; }
die() { # die STATUS MESSAGE: the scenario failed; cleanup runs from the EXIT trap
	local rc=$1
	shift
	log "FAIL: $*"
	exit "$rc"
}

[[ $(id -u) == 0 ]] || { echo "[$scenario] FAIL: must run as root (tracefs, namespaces, cgroups)" >&2; exit 4; }
[[ -d $tracing/instances ]] || mount -t tracefs nodev $tracing 2>/dev/null
[[ -d $tracing/instances ]] || { echo "[$scenario] FAIL: no tracefs at $tracing" >&2; exit 4; }

rm -rf "$dir"
mkdir -p "$dir/run" || { echo "run-linux.sh: cannot create $dir" >&2; exit 2; }
: >"$dir/scenario.log"
: >"$dir/vars.env"
setvar() { echo "$1=$2" >>"$dir/vars.env"; }

# ---- cleanup: everything this run made, on every path ----
children=()    # every process we started (engines included)
engine_pids=() # engines not yet reaped
declare -A engine_instances=() # engine pid -> the tracefs instances it makes
stale=()       # instances of our engines that died without removing them (killed, crashed)
netns=()       # network namespaces
cgroup=        # memory cgroup
tmpdirs=()

# wait_exit PID SECONDS: waits for a child, sets $exit_status; 1 on timeout.
wait_exit() {
	local p=$1 limit=$2
	for _ in $(seq $((limit * 10))); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$p" 2>/dev/null && return 1
	wait "$p" 2>/dev/null
	exit_status=$?
	return 0
}

# reap_engine PID SECONDS: waits for an engine to end; sets $exit_status; 1 on timeout. An engine that
# died of a signal (status >= 128) could not remove its tracefs instances: they become ours to remove.
reap_engine() {
	local p=$1 i keep=() names=()
	wait_exit "$p" "$2" || return 1
	if ((exit_status >= 128)); then
		read -ra names <<<"${engine_instances[$p]}"
		stale+=("${names[@]}")
	fi
	for i in "${engine_pids[@]}"; do [[ $i == "$p" ]] || keep+=("$i"); done
	engine_pids=("${keep[@]}")
	return 0
}
cleanup() {
	local rc=$? p i
	trap - EXIT INT TERM
	# Engines first, with SIGINT: they save and remove their own instances. Only an engine that had to be
	# killed (or crashed) leaves instances, and only those are removed here: never another recorder's.
	for p in "${engine_pids[@]}"; do kill -INT "$p" 2>/dev/null; done
	for p in "${engine_pids[@]}"; do
		if ! reap_engine "$p" 60; then
			echo "[$scenario] engine $p did not stop within 60 s: kill -9"
			kill -9 "$p" 2>/dev/null
			reap_engine "$p" 10
		fi
	done
	for p in "${children[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${children[@]}"; do wait "$p" 2>/dev/null; done
	for i in "${stale[@]}"; do
		if [[ -d $tracing/instances/$i ]]; then
			echo 0 >"$tracing/instances/$i/tracing_on" 2>/dev/null
			rmdir "$tracing/instances/$i" 2>/dev/null || echo "[$scenario] cleanup: cannot remove tracefs instance $i"
		fi
	done
	for i in "${netns[@]}"; do
		if ip netns list | grep -qw -- "$i"; then
			for p in $(ip netns pids "$i" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
			ip netns del "$i" 2>/dev/null || echo "[$scenario] cleanup: cannot delete network namespace $i"
		fi
	done
	if [[ -n $cgroup && -d $cgroup ]]; then
		for _ in 1 2 3 4 5; do
			while read -r p; do kill -9 "$p" 2>/dev/null; done <"$cgroup/cgroup.procs"
			sleep 0.2
			rmdir "$cgroup" 2>/dev/null && break
		done
		[[ -d $cgroup ]] && echo "[$scenario] cleanup: cannot remove cgroup $cgroup"
	fi
	for i in "${tmpdirs[@]}"; do rm -rf "$i"; done
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "[$scenario] interrupted: cleaning up"; exit 130' INT
trap 'echo "[$scenario] terminated: cleaning up"; exit 143' TERM

# Starts a program in the background and remembers it; sets $bg_pid.
bg() {
	"$@" &
	bg_pid=$!
	children+=("$bg_pid")
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="${2:-$(now)}" 'BEGIN { printf "%.3f", b - a }'; }

t_begin=$(now)
log "scenario $scenario ($mode): warmup ${warmup} s, settle ${settle} s; profile $rules; out $dir"

# ---- the full profile: the same sessions without whitelists ----
# A larger file and per-CPU ring than the profile's: without whitelists the key session takes every
# syscall and user page fault (~5 MB/s on an idle 2-CPU VM, more under load), and its counts must not
# lose events or wrap.
full_profile=$dir/full-profile.yaml
# Per CPU: 128 MiB over all CPUs, at least 16 MiB each (the filtered session has 1 MiB). The file's bound
# is shared out per CPU; 1900 MiB each keeps every CPU's data under the 2 GiB that libtracecmd 3.1 can
# append to a trace.dat (measured: 3.7 GB over 2 CPUs failed with EINVAL).
buffer_kb=$((131072 / $(nproc)))
((buffer_kb < 16384)) && buffer_kb=16384
"$bin/hs_fullprofile" "$rules" --platform linux --file-mb $((1900 * $(nproc))) --buffer-kb "$buffer_kb" \
	-o "$full_profile" ||
	die 3 "hs_fullprofile could not derive the full profile from $rules"
"$rulecheck" --strict --quiet "$full_profile" >"$dir/full-profile.rulecheck" 2>&1 ||
	die 3 "the generated full profile fails rulecheck --strict: $(cat "$dir/full-profile.rulecheck")"
mapfile -t full_loggers < <(sed -n 's/^ *logger_name: "\(.*\)"$/\1/p' "$full_profile")
((${#full_loggers[@]})) || die 3 "no linux sessions in $full_profile"
full_instances=${full_loggers[*]}
filtered_instances=${full_loggers[*]/%_full/}
# The filtered capture uses the profile's own instance names: refuse to take them from a running recorder
# (its engine would refuse too, or worse, remove a live recorder's ring as if it were stale).
in_use() { # in_use NAME: a process holds a file of the instance open (a streaming session always does)
	# shellcheck disable=SC2010 # the fd links' targets, not file names, are what is matched
	[[ -d $tracing/instances/$1 ]] && ls -l /proc/[0-9]*/fd 2>/dev/null | grep -q -- "instances/$1/"
}
for i in $filtered_instances $full_instances; do
	in_use "$i" && die 4 "tracefs instance $i is in use (a hindsight engine recording with this profile?): stop it first"
done

# ---- scenario set-up that must exist before the captures start ----
port=47113
net_a=hs_scen_a_$$ net_b=hs_scen_b_$$
veth_a=hs_veth_a veth_b=hs_veth_b bridge=hs_br
addr_a=10.213.47.1 addr_b=10.213.47.2

setup_network() {
	command -v ip >/dev/null || die 4 "network_disconnect needs iproute2 (ip)"
	netns+=("$net_a" "$net_b")
	ip netns add "$net_a" && ip netns add "$net_b" || die 4 "cannot create network namespaces"
	# Both ends are made inside the namespaces: the host's interfaces are never touched. The server's end
	# is a bridge port, as container and VM links usually are: the bridge logs the port's link going
	# down and coming back (printk), as NIC drivers log "Link is Down/Up".
	ip -n "$net_a" link add "$veth_a" type veth peer name "$veth_b" netns "$net_b" &&
		ip -n "$net_b" link add "$bridge" type bridge &&
		ip -n "$net_b" link set "$veth_b" master "$bridge" &&
		ip -n "$net_a" addr add "$addr_a/24" dev "$veth_a" &&
		ip -n "$net_b" addr add "$addr_b/24" dev "$bridge" &&
		ip -n "$net_a" link set lo up && ip -n "$net_b" link set lo up &&
		ip -n "$net_a" link set "$veth_a" up && ip -n "$net_b" link set "$veth_b" up &&
		ip -n "$net_b" link set "$bridge" up || die 4 "cannot set up the veth pair and bridge in the namespaces"
	setvar veth_a "$veth_a"
	setvar veth_b "$veth_b"
	setvar bridge "$bridge"
	setvar port "$port"
	bg ip netns exec "$net_b" "$bin/hs_tcp" recv "$addr_b" "$port" >"$dir/tcp-recv.out" 2>&1
	recv_pid=$bg_pid
	for _ in $(seq 50); do grep -q listening "$dir/tcp-recv.out" && break; sleep 0.1; done
	grep -q listening "$dir/tcp-recv.out" || die 3 "the TCP receiver did not start: $(cat "$dir/tcp-recv.out")"
	setvar recv_pid "$recv_pid"
	# Carrier comes up asynchronously: wait until the bridge forwards, so the captures see only the trigger's changes.
	for _ in $(seq 50); do
		ip -n "$net_b" link show "$veth_b" | grep -q 'state UP' && sleep 0.2 && break
		sleep 0.1
	done
}

setup_cgroup() {
	local root=/sys/fs/cgroup/memory # cgroup v1
	[[ -d $root ]] || root=/sys/fs/cgroup
	cgroup=$root/hs_scen_oom_$$
	mkdir "$cgroup" 2>/dev/null || { cgroup=; die 4 "cannot create a memory cgroup under $root"; }
	local limit=$((short ? 192 : 512))M
	if [[ -f $cgroup/memory.limit_in_bytes ]]; then
		echo "$limit" >"$cgroup/memory.limit_in_bytes"
	elif [[ -f $cgroup/memory.max ]]; then
		echo "$limit" >"$cgroup/memory.max"
		echo 0 >"$cgroup/memory.swap.max" 2>/dev/null
	else
		die 4 "no memory controller in $cgroup (cgroup v2 without +memory in the parent's subtree_control?)"
	fi || die 4 "cannot set the memory limit of $cgroup"
	setvar cgroup_limit "$limit"
}

case $scenario in
network_disconnect) setup_network ;;
memory_pressure) setup_cgroup ;;
disk_io_spike)
	[[ $(stat -f -c %T "$disk_dir" 2>/dev/null) == tmpfs ]] && die 4 "$disk_dir is a tmpfs: give --disk-dir on a real disk"
	tmp=$(mktemp -d "$disk_dir/hs_scen_disk.XXXXXX") || die 4 "cannot make a temp dir in $disk_dir"
	tmpdirs+=("$tmp")
	;;
esac

# ---- the two captures ----
start_engine() { # start_engine KIND PROFILE: sets ${KIND}_pid
	local kind=$1 profile=$2
	(cd "$dir/run" && exec "$engine" --rules "$profile") >"$dir/$kind.engine.out" 2>&1 &
	children+=("$!")
	engine_pids+=("$!")
	local inst=${kind}_instances
	engine_instances[$!]=${!inst}
	printf -v "${kind}_pid" %s "$!"
}
filtered_pid='' full_pid=''
start_engine filtered "$rules"
start_engine full "$full_profile"
limit=${HS_TEST_START_TIMEOUT:-90}
t_rec_filtered='' t_rec_full=''
for _ in $(seq $((limit * 10))); do
	[[ -z $t_rec_filtered ]] && grep -q '^engine: recording' "$dir/filtered.engine.out" && t_rec_filtered=$(now)
	[[ -z $t_rec_full ]] && grep -q '^engine: recording' "$dir/full.engine.out" && t_rec_full=$(now)
	[[ -n $t_rec_filtered && -n $t_rec_full ]] && break
	for kind in filtered full; do
		p=${kind}_pid
		kill -0 "${!p}" 2>/dev/null && continue
		reap_engine "${!p}" 1
		grep -q 'cannot be removed (Device or resource busy)' "$dir/$kind.engine.out" &&
			die 4 "the $kind engine found its tracefs instances in use (another hindsight engine started meanwhile?)"
		die 3 "the $kind engine exited early: $(grep '^engine' "$dir/$kind.engine.out" | tail -5)"
	done
	sleep 0.1
done
[[ -n $t_rec_filtered && -n $t_rec_full ]] || die 3 "the engines did not start recording within $limit s"
# Neither recorder records the recorders: with every syscall enabled, the full capture would take both
# engines' own reads and writes (its largest source when idle) and, while it writes its file at the
# stop, feed on itself (measured: 25 M events and 8.5 GB streamed for a 5 s capture). So both
# engines' threads, and threads they start later (event-fork), are excluded from every instance of
# both captures. In production a recorder with this profile sees only its own exit_group.
for kind in filtered full; do
	p=${kind}_pid
	for i in $filtered_instances $full_instances; do
		[[ -d $tracing/instances/$i ]] || continue
		echo 1 >"$tracing/instances/$i/options/event-fork" 2>/dev/null
		for t in /proc/"${!p}"/task/*; do
			echo "${t##*/}" >>"$tracing/instances/$i/set_event_notrace_pid" ||
				die 3 "cannot exclude the engines from instance $i (set_event_notrace_pid)"
		done
	done
done
log "both captures recording ($(elapsed "$t_begin") s after start); engines excluded from both; warmup ${warmup} s"
sleep "$warmup"

# ---- triggers ----
ncpu=$(nproc)
trigger_baseline() {
	# Idle. One marker process with a known lifetime proves the capture sees process lifetimes.
	local idle=$((short ? 2 : 30))
	bg "$bin/hs_load" idle 0.2 >"$dir/marker.out" 2>&1
	setvar marker_pid "$bg_pid"
	wait_exit "$bg_pid" 10 && ((exit_status == 0)) || die 3 "the marker process did not exit 0"
	log "idle for $idle s"
	sleep "$idle"
}
trigger_cpu_saturation() {
	# Two busy threads per CPU: every CPU saturated, runnable threads waiting for one.
	local secs=$((short ? 3 : 25)) threads=$((2 * ncpu))
	log "burning $threads threads for $secs s"
	bg "$bin/hs_load" burn "$threads" "$secs" >"$dir/burn.out" 2>&1
	setvar burn_pid "$bg_pid"
	setvar burn_threads "$threads"
	wait_exit "$bg_pid" $((secs + 30)) || die 3 "the burner did not finish in time"
	((exit_status == 0)) || die 3 "the burner exited $exit_status: $(cat "$dir/burn.out")"
}
trigger_memory_pressure() {
	# A hog grows inside the memory cgroup until the cgroup's OOM killer picks it.
	local step=$((short ? 8 : 2)) every=$((short ? 25 : 100))
	log "hog in $cgroup (limit $(sed -n 's/^cgroup_limit=//p' "$dir/vars.env")): $step MiB every $every ms until the OOM kill"
	bg sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" hog "$3" "$4"' sh "$cgroup" "$bin/hs_load" "$step" "$every" \
		>"$dir/hog.out" 2>&1
	setvar hog_pid "$bg_pid"
	wait_exit "$bg_pid" 120 || die 3 "the hog was not OOM-killed within 120 s"
	((exit_status == 137)) || die 3 "the hog was not OOM-killed: exit status $exit_status: $(cat "$dir/hog.out")"
	log "hog pid $(sed -n 's/^hog_pid=//p' "$dir/vars.env") OOM-killed (SIGKILL)"
}
trigger_disk_io_spike() {
	# Large writes with an fsync every 32 MiB, in a temp dir on a real disk; repeated for the long form.
	local secs=$((short ? 0 : 25)) mb=512 t0 n=0
	t0=$(now)
	while :; do
		bg "$bin/hs_load" write "$tmp" "$mb" 32 >>"$dir/write.out" 2>&1
		((n == 0)) && setvar writer_pid "$bg_pid"
		wait_exit "$bg_pid" 300 || die 3 "the writer did not finish within 300 s"
		((exit_status == 0)) || die 3 "the writer exited $exit_status: $(tail -3 "$dir/write.out")"
		n=$((n + 1))
		awk -v e="$(elapsed "$t0")" -v s="$secs" 'BEGIN { exit !(e < s) }' || break
	done
	setvar writes "$n"
	log "wrote $n x $mb MiB with fsync: $(grep -o 'in [0-9.]* s ([0-9]* MiB/s)' "$dir/write.out" | tr '\n' ' ')"
}
trigger_network_disconnect() {
	# A paced TCP transfer over the veth pair; the server's link goes down, then up, mid-transfer.
	local down=$((short ? 2 : 5)) before=$((short ? 1 : 8)) after=$((short ? 2 : 15)) kbps=256
	local secs=$((before + down + after))
	bg ip netns exec "$net_a" "$bin/hs_tcp" send "$addr_b" "$port" "$secs" "$kbps" >"$dir/tcp-send.out" 2>&1
	send_pid=$bg_pid
	setvar send_pid "$send_pid"
	for _ in $(seq 50); do grep -q connected "$dir/tcp-send.out" && break; sleep 0.1; done
	grep -q connected "$dir/tcp-send.out" || die 3 "the TCP sender did not connect: $(cat "$dir/tcp-send.out")"
	log "sending $kbps KiB/s for $secs s; link $veth_b down after $before s, for $down s"
	sleep "$before"
	ip -n "$net_b" link set "$veth_b" down || die 3 "cannot take $veth_b down"
	log "link $veth_b down"
	sleep "$down"
	ip -n "$net_b" link set "$veth_b" up || die 3 "cannot bring $veth_b up"
	log "link $veth_b up"
	wait_exit "$send_pid" $((after + 60)) || die 3 "the TCP sender did not finish"
	((exit_status == 0)) || die 3 "the TCP sender failed: $(cat "$dir/tcp-send.out")"
	wait_exit "$recv_pid" 30 || die 3 "the TCP receiver did not see the end of the transfer"
	((exit_status == 0)) || die 3 "the TCP receiver failed: $(cat "$dir/tcp-recv.out")"
	log "transfer done: $(grep -h -o '\(sent\|received\) [0-9]* bytes' "$dir/tcp-send.out" "$dir/tcp-recv.out" | tr '\n' ' ')"
}
trigger_process_crash() {
	# Children that die of SIGSEGV (a NULL store) and SIGABRT (abort()); more rounds in the long form.
	local rounds=$((short ? 1 : 6)) r
	ulimit -c 0 # no core files
	for ((r = 0; r < rounds; r++)); do
		bg "$bin/hs_crash" segv --delay-ms 200 >>"$dir/crash.out" 2>&1
		local segv=$bg_pid
		bg "$bin/hs_crash" abort --delay-ms 200 >>"$dir/crash.out" 2>&1
		local abrt=$bg_pid
		if ((r == 0)); then
			setvar segv_pid "$segv"
			setvar abort_pid "$abrt"
		fi
		wait_exit "$segv" 10 && ((exit_status == 139)) || die 3 "the segv child did not die of SIGSEGV (status ${exit_status:-?})"
		wait_exit "$abrt" 10 && ((exit_status == 134)) || die 3 "the abort child did not die of SIGABRT (status ${exit_status:-?})"
		((r + 1 < rounds)) && sleep 4
	done
	setvar crash_rounds "$rounds"
	log "$rounds round(s) of SIGSEGV + SIGABRT children"
}

t_trigger=$(now)
"trigger_$scenario"
log "trigger done in $(elapsed "$t_trigger") s; settle ${settle} s"
sleep "$settle"

# ---- stop both captures and collect ----
for kind in filtered full; do
	p=${kind}_pid
	kill -0 "${!p}" 2>/dev/null || die 3 "the $kind engine stopped before the scenario ended: $(grep '^engine' "$dir/$kind.engine.out" | tail -3)"
done
t_stop=$(now)
kill -INT "$filtered_pid" "$full_pid" 2>/dev/null
for kind in filtered full; do
	p=${kind}_pid
	reap_engine "${!p}" 120 || die 3 "the $kind engine did not stop within 120 s"
	[[ $exit_status == 0 ]] || die 3 "the $kind engine exited $exit_status: $(grep '^engine' "$dir/$kind.engine.out" | tail -5)"
done
log "captures stopped ($(elapsed "$t_stop") s to save)"

host="linux $(uname -r), $ncpu CPUs"
rules_shown=$rules
[[ $rules == "$src"/* ]] && rules_shown=${rules#"$src"/} # a profile of this tree: its path in the tree
for kind in filtered full; do
	run=$(sed -n 's/^engine: run folder \(.*\) (pid.*/\1/p' "$dir/$kind.engine.out")
	[[ -n $run && -d $dir/run/$run ]] || die 3 "no run folder in the $kind engine's output"
	mv "$dir/run/$run" "$dir/$kind" || die 3 "cannot move the $kind run folder"
	mv "$dir/$kind.engine.out" "$dir/$kind/engine.out"
	if [[ $kind == full ]]; then dat=full-keyevents.dat snap=full-snap.dat; else dat=keyevents.dat snap=snap.dat; fi
	mv "$dir/$kind/$dat" "$dir/$kind.dat" || die 3 "the $kind capture wrote no $dat"
	((keep_snap)) || rm -f "$dir/$kind/$snap"
	t_rec=t_rec_$kind
	secs=$(elapsed "${!t_rec}" "$t_stop")
	stats=$(grep '^engine: stats:' "$dir/$kind/engine.out" | tail -1)
	chunks=$(sed -n 's/.* \([0-9]*\) chunks dropped.*/\1/p' <<<"$stats")
	lost=$(sed -n 's/.* chunks dropped, lost \([0-9]*\).*/\1/p' <<<"$stats")
	{
		echo "# hindsight scenario counts, format 1"
		echo "# scenario: $scenario"
		echo "# capture: $kind"
		echo "# seconds: $secs"
		echo "# mode: $mode"
		echo "# profile: $( [[ $kind == full ]] && echo "full-profile.yaml (from $rules_shown)" || echo "$rules_shown")"
		echo "# trace: $kind.dat"
		echo "# lost_events: ${lost:-unknown}"
		echo "# chunks_dropped: ${chunks:-unknown}"
		echo "# host: $host"
		"$analyze" counts "$dir/$kind.dat"
	} >"$dir/$kind.counts" || die 3 "analyze counts failed on $dir/$kind.dat"
	log "$kind: $(tail -1 "$dir/$kind.counts" | cut -f2) events in $secs s (lost ${lost:-?}, chunks dropped ${chunks:-?})"
done
rmdir "$dir/run/logs/runs" "$dir/run/logs/runs-full" "$dir/run/logs" "$dir/run" 2>/dev/null

# ---- the signature, in the filtered trace ----
"$bin/hs_sigcheck" "$signatures" "$scenario" --vars "$dir/vars.env" --filtered "$dir/filtered.dat" \
	--full "$dir/full.dat" >"$dir/signature.txt" 2>&1
sig=$?
tee -a "$dir/scenario.log" <"$dir/signature.txt" | sed "s/^/[$scenario] /"
case $sig in
0) verdict=PASS rc=0 ;;
1) verdict="FAIL: coverage bug in the rules (see above)" rc=1 ;;
3) verdict="FAIL: the scenario did not produce its signature" rc=3 ;;
*) verdict="FAIL: the signature check could not run (exit $sig)" rc=3 ;;
esac
if ((prune && rc == 0)); then rm -f "$dir/full.dat" "$dir/filtered.dat"; fi
log "scenario $scenario: $verdict ($(elapsed "$t_begin") s in all)"
exit $rc
