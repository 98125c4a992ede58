#!/usr/bin/env bash
# Debian packages the test suite needs (graphviz for opto's graph rendering, chromium for the
# browser tests of the UI).  Installs only what is missing; needs root (CI runs as root).
set -euo pipefail
needed=()
command -v dot >/dev/null 2>&1 || needed+=(graphviz)
command -v chromium >/dev/null 2>&1 || needed+=(chromium)
if [ ${#needed[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "note: cannot install ${needed[*]} (not root or no apt-get); tests needing them are skipped" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${needed[@]}" >/dev/null
