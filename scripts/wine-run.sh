#!/usr/bin/env bash
# wine-run.sh: runs a Windows program under 64-bit Wine (the cross build's CTest emulator), keeping its exit status.
# usage: wine-run.sh PROGRAM.exe [ARGS...]
# WINEPREFIX defaults to a per-user prefix in $TMPDIR, made to report Windows 10
# once (the ETW code gates EVENT_FILTER_TYPE_EVENT_ID on Windows 8.1+).
# HS_WINE and HS_WINESERVER override /usr/lib/wine/wine64 and wineserver64 (not on PATH).
set -uo pipefail

wine=${HS_WINE:-/usr/lib/wine/wine64}
wineserver=${HS_WINESERVER:-/usr/lib/wine/wineserver64}
if [[ ! -x $wine ]]; then
	echo "wine-run.sh: $wine not found; install it with: apt-get install --no-install-recommends wine64" >&2
	exit 127
fi
if (($# == 0)); then
	echo "usage: wine-run.sh PROGRAM.exe [ARGS...]" >&2
	exit 2
fi
export WINEPREFIX=${WINEPREFIX:-${TMPDIR:-/tmp}/hindsight-wineprefix-$(id -u)}
# -all hides the headless start's winediag/systray noise; err+module keeps the
# one message that explains a missing DLL (otherwise exit 53 and silence).
export WINEDEBUG=${WINEDEBUG:--all,err+module}
# Neither Mono nor Gecko is installed: do not offer to download them.
export WINEDLLOVERRIDES="mscoree,mshtml="

# Wine's helpers (wineserver, services.exe, ...) inherit our stdout/stderr and
# outlive the program by seconds; on a pipe (CTest, `| tee`) the reader waits
# for them, or forever on a fresh prefix. So Wine writes to files, and we copy.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wine-run.XXXXXX") || exit 125
trap 'rm -rf "$tmp"' EXIT

# A wineserver that outlives each program by 10 s: otherwise the server and
# Wine's services stop and restart every few programs, 2-3 s each time. It
# exits by itself; if one is running already, this returns at once.
if [[ -x $wineserver ]]; then
	mkdir -p "$WINEPREFIX" && "$wineserver" -p"${HS_WINESERVER_LINGER:-10}" </dev/null >/dev/null 2>&1
fi

# First use of a prefix: create it and make it report Windows 10. Serialised,
# so that parallel tests on a fresh prefix do it once.
if [[ ! -f $WINEPREFIX/.hindsight-win10 ]]; then
	mkdir -p "$WINEPREFIX" || exit 125
	(
		flock 9
		if [[ ! -f $WINEPREFIX/.hindsight-win10 ]]; then
			# 9>&-: Wine's daemons must not inherit (and so hold) the lock.
			if ! "$wine" winecfg.exe /v win10 </dev/null >"$tmp/init.log" 2>&1 9>&-; then
				echo "wine-run.sh: could not set up the Wine prefix $WINEPREFIX (winecfg /v win10):" >&2
				cat "$tmp/init.log" >&2
				exit 125
			fi
			touch "$WINEPREFIX/.hindsight-win10"
		fi
	) 9>"$WINEPREFIX/.hindsight-init.lock" || exit 125
fi

"$wine" "$@" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
cat "$tmp/err" >&2
exit "$rc"
