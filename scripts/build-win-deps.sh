#!/usr/bin/env bash
# build-win-deps.sh: builds static libyaml and PCRE2 (8-bit) for mingw-w64 x86_64 from Debian's source packages into PREFIX.
#
# usage: scripts/build-win-deps.sh PREFIX
#
# PREFIX then holds include/, lib/libyaml.a, lib/libpcre2-8.a and the CMake
# config packages (lib/cmake/yaml: target yaml; cmake/pcre2-config.cmake:
# set PCRE2_USE_STATIC_LIBS ON, find_package(PCRE2 CONFIG COMPONENTS 8BIT) gives
# PCRE2::8BIT with PCRE2_STATIC). Configure the cross build with
#   -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake -DCMAKE_PREFIX_PATH=PREFIX
#
# The sources come through a private apt configuration (its own deb-src list,
# package lists and cache in a temporary directory), so the host's apt state
# is not touched and deb-src need not be enabled. If the newest version's files
# are missing from the mirror (bookworm-security's pcre2 .dsc answers 404 on
# some mirrors), the bookworm version is used instead; the script says which.
# Idempotent: a stamp in PREFIX keyed on the versions, this script, the
# toolchain file and the compiler skips the work when nothing changed.
#
# Environment: HS_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# HS_DEBIAN_SECURITY_MIRROR (default http://deb.debian.org/debian-security),
# HS_DEBIAN_SUITE (default bookworm), HS_DEBIAN_KEYRING (default Debian's archive
# keyring), HS_KEEP_WORK=1 keeps the work directory.
set -euo pipefail

YAML_VERSION=0.2.5
PCRE2_VERSION=10.42
TRIPLE=x86_64-w64-mingw32

die() {
	echo "build-win-deps.sh: error: $*" >&2
	exit 1
}
say() { echo "build-win-deps.sh: $*"; }

(($# == 1)) || { echo "usage: scripts/build-win-deps.sh PREFIX" >&2; exit 2; }
prefix=$1
[[ -n $prefix ]] || die "PREFIX is empty"
mkdir -p "$prefix" || die "cannot create $prefix"
prefix=$(cd "$prefix" && pwd)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
toolchain=$here/../cmake/mingw-w64-x86_64.cmake
[[ -f $toolchain ]] || die "toolchain file not found: $toolchain"
toolchain=$(cd "$(dirname "$toolchain")" && pwd)/$(basename "$toolchain")

for tool in "$TRIPLE-gcc:gcc-mingw-w64-x86-64-win32" "cmake:cmake" "apt-get:apt" "dpkg-source:dpkg-dev" \
	"sha256sum:coreutils"; do
	command -v "${tool%%:*}" >/dev/null ||
		die "${tool%%:*} not found; install it with: apt-get install --no-install-recommends ${tool#*:}"
done

# The stamp: what was asked for and everything that decides how it is built.
stamp=$prefix/.hindsight-win-deps.stamp
key="libyaml=$YAML_VERSION pcre2=$PCRE2_VERSION cc=$("$TRIPLE-gcc" -dumpfullversion)"
key+=" script=$(sha256sum <"${BASH_SOURCE[0]}" | cut -c1-16) toolchain=$(sha256sum <"$toolchain" | cut -c1-16)"
if [[ -f $stamp && $(head -n1 "$stamp") == "$key" && -f $prefix/lib/libyaml.a && -f $prefix/lib/libpcre2-8.a ]]; then
	say "up to date in $prefix ($(sed -n 2p "$stamp"))"
	exit 0
fi
rm -f "$stamp"

mirror=${HS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${HS_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
suite=${HS_DEBIAN_SUITE:-bookworm}
keyring=${HS_DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
[[ -r $keyring ]] || die "Debian archive keyring $keyring not found (package debian-archive-keyring)"
jobs=$(nproc 2>/dev/null || echo 2)

work=$(mktemp -d "${TMPDIR:-/tmp}/hs-win-deps.XXXXXX") || die "cannot create a work directory"
if [[ ${HS_KEEP_WORK:-} == 1 ]]; then
	trap 'say "work directory kept: $work"' EXIT
else
	trap 'rm -rf "$work"' EXIT
fi
log=$work/log.txt

# Runs a step quietly; on failure shows its output and stops.
run() {
	local what=$1
	shift
	if ! "$@" >"$log" 2>&1; then
		tail -n 40 "$log" >&2
		die "$what failed (command: $*)"
	fi
}

# A private apt: only deb-src lines, own lists and cache, nothing shared with the host.
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial"
cat >"$work/apt/sources.list" <<EOF
deb-src [signed-by=$keyring] $mirror $suite main
deb-src [signed-by=$keyring] $security $suite-security main
EOF
apt_opts=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache")
[[ $(id -u) -ne 0 ]] || apt_opts+=(-o APT::Sandbox::User=root)
say "fetching the deb-src lists for $suite and $suite-security from $mirror and $security"
run "apt-get update (private deb-src lists)" apt-get "${apt_opts[@]}" update
# apt-get update exits 0 when a mirror fails; what it got is what counts.
if ! compgen -G "$work/apt/lists/*_source_Sources*" >/dev/null; then
	grep -E '^(E|W|Err):' "$log" | sed 's/^/    /' >&2 || true
	die "apt-get update fetched no source package lists from $mirror (set HS_DEBIAN_MIRROR to a reachable Debian mirror)"
fi

# fetch PKG UPSTREAM_VERSION: downloads and unpacks the source package in
# $work/src/PKG, the newest version first, then the suite's own; sets $srcdir.
fetch() {
	local pkg=$1 want=$2 dir=$work/src/$1 dsc
	mkdir -p "$dir"
	if ! (cd "$dir" && apt-get "${apt_opts[@]}" source --download-only "$pkg") >"$log" 2>&1; then
		say "$pkg: the newest source version could not be downloaded:"
		grep -E '^(E|Err):' "$log" | sed 's/^/    /' >&2 || true
		say "$pkg: falling back to $pkg/$suite"
		rm -rf "$dir" && mkdir -p "$dir"
		if ! (cd "$dir" && apt-get "${apt_opts[@]}" source --download-only "$pkg/$suite") >"$log" 2>&1; then
			tail -n 20 "$log" >&2
			die "cannot download the source package $pkg (neither the newest version nor $pkg/$suite)"
		fi
	fi
	dsc=$(ls "$dir"/*.dsc)
	local version
	version=$(sed -n 's/^Version: //p' "$dsc")
	[[ $version == "$want"-* || $version == *:"$want"-* ]] ||
		die "$pkg: Debian offers $version, this script builds upstream $want; update YAML_VERSION/PCRE2_VERSION and check the build"
	run "unpacking $pkg $version" dpkg-source -x "$dsc" "$dir/tree"
	say "$pkg: using Debian source $version"
	used+=("$pkg $version")
	srcdir=$dir/tree
}

# build NAME SRCDIR CMAKE_ARGS...: configure, build and install one library.
build() {
	local name=$1 src=$2
	shift 2
	say "building $name"
	run "$name: cmake configure" cmake -S "$src" -B "$work/build-$name" -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
		-DCMAKE_CROSSCOMPILING_EMULATOR= -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
		-DBUILD_SHARED_LIBS=OFF -Wno-dev "$@"
	run "$name: build" cmake --build "$work/build-$name" -j"$jobs"
	run "$name: install" cmake --install "$work/build-$name"
}

used=()
fetch libyaml "$YAML_VERSION"
build libyaml "$srcdir" -DBUILD_TESTING=OFF -DINSTALL_CMAKE_DIR=lib/cmake/yaml

fetch pcre2 "$PCRE2_VERSION"
build pcre2 "$srcdir" -DBUILD_STATIC_LIBS=ON -DPCRE2_BUILD_PCRE2_8=ON -DPCRE2_BUILD_PCRE2_16=OFF \
	-DPCRE2_BUILD_PCRE2_32=OFF -DPCRE2_SUPPORT_JIT=OFF -DPCRE2_BUILD_PCRE2GREP=OFF -DPCRE2_BUILD_TESTS=OFF \
	-DPCRE2_SUPPORT_LIBZ=OFF -DPCRE2_SUPPORT_LIBBZ2=OFF -DPCRE2_SUPPORT_LIBEDIT=OFF -DPCRE2_SUPPORT_LIBREADLINE=OFF

for f in lib/libyaml.a lib/cmake/yaml/yamlConfig.cmake include/yaml.h lib/libpcre2-8.a cmake/pcre2-config.cmake \
	include/pcre2.h; do
	[[ -f $prefix/$f ]] || die "the install is missing $prefix/$f"
done
printf '%s\n%s\n' "$key" "$(IFS=,; echo "${used[*]}")" >"$stamp"
say "installed into $prefix: ${used[*]}"
