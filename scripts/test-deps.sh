#!/usr/bin/env bash
# Installs and starts what the test suite needs beyond npm, when it is missing: Debian's
# chromium (docs screenshots), openssl (a certificate for the inbound SMTP listener's STARTTLS
# and the realtime test's TLS proxy), PostgreSQL (the second storage path), Redis (limits and
# revocation across instances), and the voice model's built-in engines: espeak-ng (speech),
# pocketsphinx with pocketsphinx-en-us (recognition), lame, flac and opus-tools (mp3, flac and
# opus encoders). Runs as `pretest`; needs root (or sudo) only to install.
# The tests reach them at TEST_DATABASE_URL (postgres://eurus:eurus@127.0.0.1:5432/postgres)
# and TEST_REDIS_URL (redis://127.0.0.1:6379) unless those are set.
set -euo pipefail
sudo=""
as_postgres="runuser -u postgres --"
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
  as_postgres="sudo -u postgres"
fi

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
command -v pocketsphinx_continuous >/dev/null 2>&1 || missing+=(pocketsphinx)
[ -f /usr/share/pocketsphinx/model/en-us/en-us.lm.bin ] || missing+=(pocketsphinx-en-us)
command -v lame >/dev/null 2>&1 || missing+=(lame)
command -v flac >/dev/null 2>&1 || missing+=(flac)
command -v opusenc >/dev/null 2>&1 || missing+=(opus-tools)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-deps: installing ${missing[*]} from Debian's packages"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ -z "${TEST_DATABASE_URL:-}" ]; then
  if ! pg_isready -q -h 127.0.0.1 -p 5432; then
    version=$(ls /etc/postgresql | sort -n | tail -n 1)
    $sudo pg_ctlcluster "$version" main start
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
  fi
  $as_postgres psql -qtAc "select 1 from pg_roles where rolname = 'eurus'" | grep -q 1 ||
    $as_postgres psql -qc "create role eurus login superuser password 'eurus'"
fi

if [ -z "${TEST_REDIS_URL:-}" ]; then
  redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 ||
    redis-server --bind 127.0.0.1 --port 6379 --save '' --appendonly no --daemonize yes >/dev/null
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.2; done
fi
echo "test-deps: chromium, PostgreSQL, Redis and the voice engines are ready"
