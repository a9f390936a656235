# partial.sh: how a test says which of its checks it could not make here (sourced), so a missing tool never passes.
# partial_skip WHAT WHY: WHAT is not checked because of WHY (no node, no npm modules, no chromium). With CI=true,
# where ./run.sh --test installs every tool, that is a failure at once. Otherwise the test goes on with its other
# checks and partial_end, its last line, exits 77 (CTest: skipped) listing what was left out, instead of 0.

partial_left=()
partial_skip() {
	if [[ ${CI:-} == true ]]; then
		echo "$(basename "$0"): FAIL: $1 not checked: $2; CI=true, where ./run.sh --test installs it" >&2
		exit 1
	fi
	echo "$(basename "$0"): note: $1 not checked: $2"
	partial_left+=("$1: $2")
}
partial_end() {
	((${#partial_left[@]} == 0)) && return 0
	echo "$(basename "$0"): SKIPPED in part (every other check passed); not checked:"
	printf '  - %s\n' "${partial_left[@]}"
	exit 77
}
