#!/usr/bin/env bash
# softirq.sh: a UDP flood (random sender name, on another CPU) over a veth pair between two network namespaces;
# RPS on the receiving end steers its NET_RX softirq work (3000 ingress filters per datagram) to the game's CPU,
# 85 % busy, during a heavy frame (9-14 ms of CPU) and after it. With 5-10 ms a fresh-clone run beside its background
# builds saw frames of 24 and 39 ms, under the trigger's 50 ms (the softirq got less of the CPU than 85 %).
. "$(dirname "$0")/../lib.sh"
command -v ip >/dev/null || lack "no ip (iproute2)"
sender=$(new_culprit)
# The flood outlasts the frame it lands on (9-14 ms of CPU, a fraction of the CPU left to it), so the frame's time
# is the softirq's and not the load's once the flood is over.
ms=$(rand_int 300 450) heavy=$(rand_int 9 14)
a=$(rand_name) b=$(rand_name) net=10.$(rand_int 64 250).$(rand_int 0 255)
ip netns add "$a" && at_exit "ip netns del '$a'" || fail "cannot create netns $a"
ip netns add "$b" && at_exit "ip netns del '$b'" || fail "cannot create netns $b"
ip link add va netns "$a" type veth peer name vb netns "$b" || fail "cannot create the veth pair"
ip -n "$a" addr add "$net.1/30" dev va && ip -n "$b" addr add "$net.2/30" dev vb &&
	ip -n "$a" link set va up && ip -n "$b" link set vb up &&
	ip -n "$a" link set lo up && ip -n "$b" link set lo up || fail "cannot configure the veth pair"
# RPS: packets vb receives are processed on the game's CPU (its backlog, raised by an IPI from the sender's CPU).
printf '%x' $((1 << cpu)) | ip netns exec "$b" tee /sys/class/net/vb/queues/rx-0/rps_cpus >/dev/null ||
	fail "cannot set RPS on vb"
# Receive-side work per packet, as a firewall's rule set makes it: N ingress filters that do not match.
nf=${HS_SOFTIRQ_FILTERS:-3000}
if ((nf > 0)); then
	ip netns exec "$b" tc qdisc add dev vb ingress || fail "cannot add an ingress qdisc"
	for ((i = 1; i <= nf; i++)); do
		echo "filter add dev vb parent ffff: protocol ip prio 1 u32" \
			"match ip dport $((20000 + i)) 0xffff flowid ffff:1"
	done >"$work/filters.tc"
	ip netns exec "$b" tc -batch "$work/filters.tc" || fail "cannot add the ingress filters"
fi
rx0=$(awk -v c=$((cpu + 2)) '/NET_RX/{print $c}' /proc/softirqs)
start_game --signal-fifo "$start_fifo" --inject work --ms "$heavy"
# The sender paces its bursts so that NET_RX keeps the game's CPU busy 85 % of the time in the softirq after each
# interrupt, never so long that the kernel defers the rest to ksoftirqd (a thread with a fair share, no more: a
# saturating flood took only half the game's CPU). SCHED_FIFO on its own CPU, so stress-ng there does not delay
# the next burst.
start_culprit --netns "$a" "$sender" udp --cpu "$other" --fifo 50 --dst "$net.2" --duty "${HS_SOFTIRQ_DUTY:-85}" \
	--start-fifo "$start_fifo" --offset-ms -2 --ms "$ms"
wait_game
wait_culprits
injected_by "$sender"
rx1=$(awk -v c=$((cpu + 2)) '/NET_RX/{print $c}' /proc/softirqs)
read -r _ _ spid _ stid _ < <(grep '^culprit ' "$work/$sender.out")
read -r _ sent _ < <(grep '^sent ' "$work/$sender.out")
bursts=$(sed -n 's/^bursts //p' "$work/$sender.out")
note culprit "$sender pid $spid tid $stid sends UDP from netns $a on CPU $other; NET_RX runs on CPU $cpu"
note culprit_pid "$spid"
note culprit_tid "$stid"
note net_rx "$((rx1 - rx0)) NET_RX softirqs on CPU $cpu during the scenario, $sent datagrams sent, bursts $bursts"
note expect_culprit_what "NET_RX"
finish interrupts - "$sender (pid $spid, CPU $other) floods UDP over veth $a/$b for $ms ms from 2 ms before frame" \
	"$plan_frame, NET_RX steered (RPS) to CPU $cpu; the frame needs $heavy ms of CPU"
