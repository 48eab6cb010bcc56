#!/usr/bin/env bash
# Installs what the test suite needs beyond npm, when it is missing: Debian's chromium (the docs
# screenshot test). Runs as `pretest`; needs root (or sudo) only when something is missing.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-deps: installing ${missing[*]} from Debian's packages"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
