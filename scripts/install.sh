#!/bin/sh
# Installs the muxbridge binary from a GitHub release.
#
# It picks the archive for this OS and CPU (muxbridge-<os>-<arch>.tar.xz), downloads it and the
# release's SHA256SUMS over https only (every redirect too: a hop to plain http is refused, with
# curl and with wget alike), checks the archive's SHA-256, checks its build provenance with the
# GitHub CLI when it is there (and says so when it is not), unpacks the binary, runs it once, and
# only then moves it into place with one rename, so a refused or interrupted install never
# leaves a half-written binary. Any failure prints one line on stderr and exits non-zero.
#
# Where it goes: DIR/muxbridge, DIR being --prefix, else $MUXBRIDGE_PREFIX, else ~/.local/bin.
# To uninstall: `muxbridge uninstall` (takes the OpenCode plugin away), then remove that one
# file (rm ~/.local/bin/muxbridge). The installer writes nothing else.
#
#   sh install.sh [--prefix DIR] [--version X.Y.Z|latest]
#   curl -fsSL --proto '=https' <release>/install.sh | sh -s -- --prefix ~/bin
#
# Environment: MUXBRIDGE_VERSION and MUXBRIDGE_PREFIX (as the flags); MUXBRIDGE_REPO, the
# GitHub repository (owner/name) to install from, default DEFAULT_REPO below;
# MUXBRIDGE_RELEASE_URL, the releases base URL (default https://github.com/<repo>/releases; a
# mirror must have the same layout: <base>/latest/download/<file>, <base>/download/v<version>/
# <file>; https only); MUXBRIDGE_REQUIRE_ATTESTATION=1 refuses to install unless the build
# provenance verifies.
#
# Downloaders: curl (--proto =https --proto-redir =https), else GNU Wget 1.x. wget has no
# switch that limits redirects to https (--https-only only applies to recursive downloads), so
# with wget each hop is fetched with --max-redirect=0 and a redirect is followed here only when
# its target is https. Another wget (BusyBox, Wget2) is refused: its redirects are not checked.
set -eu

# The GitHub repository to install from. Empty in the source tree; the release workflow writes
# the repository it runs in here in the copy it attaches to each release
# (scripts/build_release.ts --repo). Before muxbridge's first release there is nothing to
# install: build from source (README, "From source").
DEFAULT_REPO=""

die() {
  printf 'muxbridge install: %s\n' "$*" >&2
  exit 1
}

usage() {
  cat <<'EOF'
Usage: install.sh [--prefix DIR] [--version X.Y.Z|latest]

Installs muxbridge from its GitHub release into DIR/muxbridge (default ~/.local/bin), after
checking the archive against the release's SHA256SUMS and, with the GitHub CLI (gh), its build
provenance. Downloads are https only, redirects included.

  --prefix DIR       where to put the muxbridge binary (default: $MUXBRIDGE_PREFIX or ~/.local/bin)
  --version VERSION  a release such as 0.1.0, or latest (default: $MUXBRIDGE_VERSION or latest)
  --help             show this help

To uninstall: muxbridge uninstall (the OpenCode plugin), then rm DIR/muxbridge.
EOF
}

version=${MUXBRIDGE_VERSION:-latest}
prefix=${MUXBRIDGE_PREFIX:-}
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --version) [ $# -ge 2 ] || die "--version needs a value"; version=$2; shift 2 ;;
    --version=*) version=${1#--version=}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument \"$1\" (see --help)" ;;
  esac
done
if [ -z "$prefix" ]; then
  [ -n "${HOME:-}" ] || die "HOME is not set; pass --prefix DIR"
  prefix=$HOME/.local/bin
fi
case $version in
  '' | *[!0-9A-Za-z.+-]*) die "--version \"$version\" is not a version; use X.Y.Z or latest" ;;
esac

# ---------------------------------------------------------------- what to download

os=$(uname -s)
case $os in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  MINGW* | MSYS* | CYGWIN*)
    die "on Windows, download muxbridge-windows-x64.tar.xz and SHA256SUMS from the release page" ;;
  *) die "no muxbridge release for OS \"$os\" (linux and darwin are built)" ;;
esac
arch=$(uname -m)
case $arch in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) die "no muxbridge release for CPU \"$arch\" (x64 and arm64 are built)" ;;
esac
asset=muxbridge-$os-$arch.tar.xz

repo=${MUXBRIDGE_REPO:-$DEFAULT_REPO}
if [ -n "${MUXBRIDGE_RELEASE_URL:-}" ]; then
  base=${MUXBRIDGE_RELEASE_URL%/}
else
  [ -n "$repo" ] ||
    die "which GitHub repository to install from is unknown (this copy of install.sh does not come from a release): set MUXBRIDGE_REPO=owner/name"
  base=https://github.com/$repo/releases
fi
case $base in
  https://?*) ;;
  *) die "refusing the release URL $base: only https:// is allowed" ;;
esac
case $version in
  latest) url=$base/latest/download ;;
  v*) url=$base/download/$version ;;
  *) url=$base/download/v$version ;;
esac

# ---------------------------------------------------------------- tools

# fetch URL FILE: downloads over https only, every redirect included; on failure prints why.
if command -v curl >/dev/null 2>&1; then
  fetch() {
    if ! err=$(curl -fsSL --show-error --proto =https --proto-redir =https --tlsv1.2 \
      --max-redirs 10 --retry 2 -o "$2" "$1" 2>&1); then
      case $err in
        *'Protocol "http"'*) printf 'refused a redirect to plain http (%s)\n' "$(last_line "$err")" ;;
        *) last_line "$err" ;;
      esac
      return 1
    fi
  }
elif command -v wget >/dev/null 2>&1; then
  case $(wget --version 2>/dev/null | sed -n 1p) in
    'GNU Wget 1.'*) ;;
    *) die "this wget is not GNU Wget 1.x, and its redirects cannot be held to https: install curl" ;;
  esac
  fetch() {
    hop=$1 hops=0
    while :; do
      # One request, no redirect followed by wget; its response headers go to $tmp/headers.
      if wget --max-redirect=0 --tries=3 --no-hsts --server-response --no-verbose -O "$2" "$hop" \
        2>"$tmp/headers"; then
        return 0
      fi
      status=$(awk '/^  HTTP\// { s = $2 } END { print s }' "$tmp/headers")
      case $status in
        301 | 302 | 303 | 307 | 308) ;;
        *) last_line "$(cat "$tmp/headers")"; return 1 ;;
      esac
      hops=$((hops + 1))
      [ "$hops" -le 10 ] || { echo "more than 10 redirects"; return 1; }
      location=$(awk 'tolower($1) == "location:" { l = $2 } END { print l }' "$tmp/headers" | tr -d '\r')
      case $location in
        https://?*) hop=$location ;;
        /*) hop=$(printf '%s\n' "$hop" | sed 's|^\(https://[^/]*\).*|\1|')$location ;;
        http://*) echo "refused a redirect to plain http ($location)"; return 1 ;;
        *) echo "refused a redirect to \"$location\" (not an https:// URL)"; return 1 ;;
      esac
    done
  }
else
  die "needs curl or wget to download; install one and retry"
fi
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | awk '{ print $1 }'; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | awk '{ print $1 }'; }
else
  die "needs sha256sum or shasum to verify the download; install one and retry"
fi
command -v tar >/dev/null 2>&1 || die "needs tar to unpack the download; install it and retry"

# The last non-empty line of a text (a downloader's complaint).
last_line() {
  printf '%s\n' "$1" | awk 'NF { last = $0 } END { print last }'
}

# ---------------------------------------------------------------- download and verify

tmp=$(mktemp -d "${TMPDIR:-/tmp}/muxbridge-install.XXXXXX") || die "cannot create a temporary directory"
staged=""
cleanup() {
  rm -rf "$tmp"
  if [ -n "$staged" ]; then rm -f "$staged"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

why=$(fetch "$url/$asset" "$tmp/$asset") ||
  die "cannot download $url/$asset ($why); nothing installed (no release there yet? then build from source: README, From source)"
why=$(fetch "$url/SHA256SUMS" "$tmp/SHA256SUMS") ||
  die "cannot download $url/SHA256SUMS ($why), so the archive cannot be verified; nothing installed"

# A line is "<64 hex>  <name>" (or "*<name>" in binary mode).
expected=$(awk -v name="$asset" '$2 == name || $2 == "*" name { print $1; exit }' "$tmp/SHA256SUMS")
[ -n "$expected" ] || die "SHA256SUMS lists no checksum for $asset; nothing installed"
actual=$(sha256 "$tmp/$asset")
[ "$actual" = "$expected" ] ||
  die "checksum mismatch for $asset: expected $expected, got $actual; nothing installed"

# The checksum file comes from the same place as the archive, so it only proves an intact
# download. The build provenance (a GitHub artifact attestation made by the release workflow,
# signed through Sigstore) proves the archive was built by this repository's workflow.
provenance=""
if ! command -v gh >/dev/null 2>&1; then
  provenance="not verified: the GitHub CLI (gh) is not installed; only the checksum was checked"
elif [ -z "$repo" ]; then
  provenance="not verified: the repository is unknown (set MUXBRIDGE_REPO=owner/name)"
else
  if why=$(gh attestation verify "$tmp/$asset" --repo "$repo" 2>&1); then
    provenance="verified: built by $repo (gh attestation verify)"
  elif [ $? -eq 4 ]; then
    provenance="not verified: gh is not logged in (run gh auth login); only the checksum was checked"
  else
    die "the build provenance of $asset does not verify for $repo ($(last_line "$why")); nothing installed"
  fi
fi
case $provenance in
  verified*) ;;
  *) [ "${MUXBRIDGE_REQUIRE_ATTESTATION:-}" != 1 ] ||
       die "build provenance $provenance, and MUXBRIDGE_REQUIRE_ATTESTATION=1; nothing installed" ;;
esac

# The archive holds one file, muxbridge; only that member is taken out of it.
mkdir "$tmp/unpacked"
if ! why=$(tar -xf "$tmp/$asset" -C "$tmp/unpacked" muxbridge 2>&1); then
  why=$(printf '%s\n' "$why" | awk 'NF { print; exit }')
  case $why in
    *xz*) die "cannot unpack $asset ($why): GNU tar needs xz (package xz-utils); nothing installed" ;;
    *) die "cannot unpack $asset ($why); nothing installed" ;;
  esac
fi
if [ ! -f "$tmp/unpacked/muxbridge" ] || [ -L "$tmp/unpacked/muxbridge" ]; then
  die "$asset holds no muxbridge binary; nothing installed"
fi
chmod 755 "$tmp/unpacked/muxbridge"
got=$("$tmp/unpacked/muxbridge" --version 2>/dev/null) ||
  die "the muxbridge in $asset does not run on this machine; nothing installed"

# ---------------------------------------------------------------- install

mkdir -p "$prefix" || die "cannot create $prefix"
# Staged next to the target so the final mv is a rename on one file system.
staged=$prefix/.muxbridge.install.$$
cp "$tmp/unpacked/muxbridge" "$staged" || die "cannot write to $prefix; nothing installed"
chmod 755 "$staged"
mv -f "$staged" "$prefix/muxbridge" || die "cannot move muxbridge into $prefix; nothing installed"
staged=""

printf '%s installed to %s/muxbridge\n' "$got" "$prefix"
printf 'build provenance %s\n' "$provenance"
printf 'next: %s/muxbridge install (the OpenCode plugin)\n' "$prefix"
printf 'to uninstall: %s/muxbridge uninstall, then rm %s/muxbridge\n' "$prefix" "$prefix"
# shellcheck disable=SC2016 # a literal $PATH, for the user to paste into a shell profile
case ":${PATH:-}:" in
  *":$prefix:"*) ;;
  *) printf 'note: %s is not on PATH; add it, e.g. export PATH="%s:$PATH"\n' "$prefix" "$prefix" ;;
esac
