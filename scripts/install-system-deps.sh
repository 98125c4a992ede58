#!/usr/bin/env bash
# Debian packages the test suite needs: graphviz (opto's graph rendering), chromium (the browser
# tests of the UI) and bubblewrap (the sandbox that runs LLM-written code; without it those tasks
# refuse to run unless the weak sandbox is allowed).  Installs only what is missing; needs root
# (CI runs as root).  apt waits up to two minutes for a dpkg lock held by another apt run.
set -euo pipefail
needed=()
command -v dot >/dev/null 2>&1 || needed+=(graphviz)
command -v chromium >/dev/null 2>&1 || needed+=(chromium)
command -v bwrap >/dev/null 2>&1 || needed+=(bubblewrap)
if [ ${#needed[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "note: cannot install ${needed[*]} (not root or no apt-get); tests needing them are skipped" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
lock=(-o DPkg::Lock::Timeout=120)
apt-get "${lock[@]}" update -qq >/dev/null
apt-get "${lock[@]}" install -y -qq --no-install-recommends "${needed[@]}" >/dev/null
