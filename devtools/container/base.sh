#!/usr/bin/env bash
# A Debian base image built here, without an image registry: debootstrap's `minbase` of this
# machine's own Debian release and architecture, from the mirror its apt sources name, trimmed
# the way Debian's `-slim` images are (no documentation, manual pages or package lists), then
# imported into podman. Containerfile.binary builds duckgate's runtime image on it in CI, where
# no registry can be reached; anyone without registry access can do the same.
#
# usage: base.sh IMAGE CACHE_DIR
#
# The root file system is kept as a tarball in CACHE_DIR (about 30 MB) and built again when it is
# older than BASE_MAX_AGE_DAYS (30), so that a warm run only imports it, and only when the image
# IMAGE does not already hold that very tarball (its label duckgate.base.sha256).
set -euo pipefail

image=${1:?usage: base.sh IMAGE CACHE_DIR}
cache=${2:?usage: base.sh IMAGE CACHE_DIR}
max_age_days=${BASE_MAX_AGE_DAYS:-30}

log() { printf 'container base: %s\n' "$*" >&2; }

# shellcheck disable=SC1091
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$suite" ] || { log "no VERSION_CODENAME in /etc/os-release: not a Debian release this script knows"; exit 1; }
arch=$(dpkg --print-architecture)

# The first Debian mirror apt uses here (deb822 `URIs:` or a one-line `deb URI SUITE …`).
mirror() {
  local file uri
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    uri=$(awk '/^URIs:/ { print $2; exit }' "$file")
    case "$uri" in *-security*) uri="" ;; esac
    [ -n "$uri" ] && { echo "$uri"; return; }
  done
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    uri=$(awk -v suite="$suite" '$1 == "deb" && $3 == suite { print $2; exit }' "$file")
    [ -n "$uri" ] && { echo "$uri"; return; }
  done
  return 1
}

tarball="$cache/debian-$suite-$arch-minbase.tar"
mkdir -p "$cache"
if [ -f "$tarball" ] && [ -n "$(find "$tarball" -mtime "-$max_age_days")" ]; then
  log "reusing $tarball"
else
  uri=$(mirror) || { log "cannot find a Debian mirror in /etc/apt/sources.list*"; exit 1; }
  log "debootstrap --variant=minbase $suite ($arch) from this machine's apt mirror"
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  debootstrap --variant=minbase --arch="$arch" "$suite" "$root" "$uri" >"$root.log" 2>&1 || {
    tail -n 30 "$root.log" >&2
    rm -f "$root.log"
    exit 1
  }
  rm -f "$root.log"
  # As Debian's -slim images: what no program reads at run time.
  rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
    "$root"/usr/share/locale/* "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* \
    "$root"/var/cache/debconf/*-old "$root"/var/log/*
  # Files dated when they were unpacked would make every rebuild a different tarball.
  tar --sort=name --numeric-owner -C "$root" -cf "$tarball.partial" .
  mv "$tarball.partial" "$tarball"
  rm -rf "$root"
  trap - EXIT
fi

sum=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$(podman image inspect --format '{{index .Labels "duckgate.base.sha256"}}' "$image" 2>/dev/null || true)" = "$sum" ]; then
  log "$image already holds this root file system"
  exit 0
fi
podman import --change "LABEL duckgate.base.sha256=$sum" --change 'CMD ["/bin/bash"]' \
  "$tarball" "$image" >/dev/null
log "imported $image ($(du -m "$tarball" | cut -f1) MB tarball)"
