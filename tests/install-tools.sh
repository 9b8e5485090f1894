#!/usr/bin/env bash
# The system tools some tests use (shells for the completion scripts, a roff linter; later
# kcat and a JRE). Best effort: installs what is missing when run as root with apt-get, and
# otherwise says what it skipped. The tests that need a missing tool skip with that reason.
set -u
wanted=(zsh:zsh fish:fish mandoc:mandoc)
missing=()
for pair in "${wanted[@]}"; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair##*:}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "tests/install-tools.sh: not root or no apt-get; tests needing ${missing[*]} will skip" >&2
  exit 0
fi
echo "tests/install-tools.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
{ apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >/dev/null 2>&1 \
  || echo "tests/install-tools.sh: apt-get failed; tests needing ${missing[*]} will skip" >&2
exit 0
