#!/bin/sh
# Installs the muxbridge binary from a GitHub release: picks the asset for this OS and CPU,
# downloads it and SHA256SUMS over https only, verifies the checksum, verifies the build
# provenance (GitHub artifact attestation) when the GitHub CLI is there and says so when it is
# not, checks that the binary runs, and only then moves it into place (one rename, so an
# interrupted or refused install never leaves a half-written binary). Any failure prints one
# line on stderr and exits non-zero.
#
#   sh install.sh [--prefix DIR] [--version X.Y.Z|latest]
#   curl -fsSL <release>/install.sh | sh -s -- --prefix ~/bin
#
# Environment: MUXBRIDGE_VERSION, MUXBRIDGE_PREFIX (same as the flags), MUXBRIDGE_REPO
# (owner/name on GitHub), MUXBRIDGE_RELEASE_URL (the releases base URL, e.g. a mirror; the
# asset is fetched from <base>/latest/download/<asset> or <base>/download/v<version>/<asset>),
# MUXBRIDGE_REQUIRE_ATTESTATION=1 (refuse to install unless the provenance verifies),
# MUXBRIDGE_INSTALL_ALLOW_HTTP=1 (accept http:// URLs: for local tests only, never for a real
# install: anyone on the path could swap the binary and its checksum together).
set -eu

# The release workflow writes the repository here when it attaches this script to a release.
DEFAULT_REPO=""

die() {
  printf 'muxbridge install: %s\n' "$*" >&2
  exit 1
}

usage() {
  cat <<'EOF'
Usage: install.sh [--prefix DIR] [--version X.Y.Z|latest]

Installs muxbridge from its GitHub release into DIR (default ~/.local/bin), after checking the
download against the release's SHA256SUMS and, with the GitHub CLI (gh), its build provenance.

  --prefix DIR       where to put the muxbridge binary (default: $MUXBRIDGE_PREFIX or ~/.local/bin)
  --version VERSION  a release such as 0.1.0, or latest (default: $MUXBRIDGE_VERSION or latest)
  --help             show this help
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
[ -n "$version" ] || die "--version is empty; use X.Y.Z or latest"

# ---------------------------------------------------------------- what to download

os=$(uname -s)
case $os in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  MINGW* | MSYS* | CYGWIN*)
    die "on Windows, download muxbridge-windows-x64.exe and SHA256SUMS from the release page" ;;
  *) die "no muxbridge release for OS \"$os\" (linux and darwin are built)" ;;
esac
arch=$(uname -m)
case $arch in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) die "no muxbridge release for CPU \"$arch\" (x64 and arm64 are built)" ;;
esac
asset=muxbridge-$os-$arch

if [ -n "${MUXBRIDGE_RELEASE_URL:-}" ]; then
  base=${MUXBRIDGE_RELEASE_URL%/}
else
  repo=${MUXBRIDGE_REPO:-$DEFAULT_REPO}
  [ -n "$repo" ] || die "unknown release repository; set MUXBRIDGE_REPO=owner/name"
  base=https://github.com/$repo/releases
fi
case $base in
  https://*) ;;
  http://*)
    [ "${MUXBRIDGE_INSTALL_ALLOW_HTTP:-}" = 1 ] ||
      die "refusing the plain-http URL $base: use https (MUXBRIDGE_INSTALL_ALLOW_HTTP=1 is for local tests only)" ;;
  *) die "unsupported release URL $base: use https://" ;;
esac
case $version in
  latest) url=$base/latest/download ;;
  v*) url=$base/download/$version ;;
  *) url=$base/download/v$version ;;
esac

# ---------------------------------------------------------------- tools

# https only, redirects included, unless plain http was allowed for a local test.
if [ "${MUXBRIDGE_INSTALL_ALLOW_HTTP:-}" = 1 ]; then
  curl_proto=https,http wget_https=""
else
  curl_proto=https wget_https=--https-only
fi
if command -v curl >/dev/null 2>&1; then
  fetch() { curl -fsSL --show-error --retry 2 --proto "=$curl_proto" --proto-redir "=$curl_proto" -o "$2" "$1"; }
elif command -v wget >/dev/null 2>&1; then
  # shellcheck disable=SC2086 # $wget_https is empty or one flag
  fetch() { wget -nv $wget_https -O "$2" "$1"; }
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

# Downloads $1 to $2; on failure prints the downloader's last line of complaint.
download() {
  if ! err=$(fetch "$1" "$2" 2>&1); then
    printf '%s\n' "$err" | awk 'NF { last = $0 } END { print last }'
    return 1
  fi
}
why=$(download "$url/$asset" "$tmp/$asset") ||
  die "cannot download $url/$asset ($why); nothing installed"
why=$(download "$url/SHA256SUMS" "$tmp/SHA256SUMS") ||
  die "cannot download $url/SHA256SUMS ($why), so the binary cannot be verified; nothing installed"

# A line is "<64 hex>  <name>" (or "*<name>" in binary mode).
expected=$(awk -v name="$asset" '$2 == name || $2 == "*" name { print $1; exit }' "$tmp/SHA256SUMS")
[ -n "$expected" ] || die "SHA256SUMS lists no checksum for $asset; nothing installed"
actual=$(sha256 "$tmp/$asset")
[ "$actual" = "$expected" ] ||
  die "checksum mismatch for $asset: expected $expected, got $actual; nothing installed"

# The checksum file comes from the same place as the binary, so it only proves an intact
# download. The build provenance (a GitHub artifact attestation made by the release workflow,
# signed through Sigstore) proves the binary was built by this repository's workflow.
attest_repo=${MUXBRIDGE_REPO:-$DEFAULT_REPO}
provenance=""
if ! command -v gh >/dev/null 2>&1; then
  provenance="not verified: the GitHub CLI (gh) is not installed; only the checksum was checked"
elif [ -z "$attest_repo" ]; then
  provenance="not verified: the repository is unknown (set MUXBRIDGE_REPO=owner/name)"
else
  if why=$(gh attestation verify "$tmp/$asset" --repo "$attest_repo" 2>&1); then
    provenance="verified: built by $attest_repo (gh attestation verify)"
  elif [ $? -eq 4 ]; then
    provenance="not verified: gh is not logged in (run gh auth login); only the checksum was checked"
  else
    why=$(printf '%s\n' "$why" | awk 'NF { last = $0 } END { print last }')
    die "the build provenance of $asset does not verify for $attest_repo ($why); nothing installed"
  fi
fi
case $provenance in
  verified*) ;;
  *) [ "${MUXBRIDGE_REQUIRE_ATTESTATION:-}" != 1 ] ||
       die "build provenance $provenance, and MUXBRIDGE_REQUIRE_ATTESTATION=1; nothing installed" ;;
esac

chmod 755 "$tmp/$asset"
got=$("$tmp/$asset" --version 2>/dev/null) ||
  die "the downloaded $asset does not run on this machine; nothing installed"

# ---------------------------------------------------------------- install

mkdir -p "$prefix" || die "cannot create $prefix"
# Staged next to the target so the final mv is a rename on one file system.
staged=$prefix/.muxbridge.install.$$
cp "$tmp/$asset" "$staged" || die "cannot write to $prefix; nothing installed"
chmod 755 "$staged"
mv -f "$staged" "$prefix/muxbridge" || die "cannot move muxbridge into $prefix; nothing installed"
staged=""

printf '%s installed to %s/muxbridge\n' "$got" "$prefix"
printf 'build provenance %s\n' "$provenance"
# shellcheck disable=SC2016 # a literal $PATH, for the user to paste into a shell profile
case ":${PATH:-}:" in
  *":$prefix:"*) ;;
  *) printf 'note: %s is not on PATH; add it, e.g. export PATH="%s:$PATH"\n' "$prefix" "$prefix" ;;
esac
