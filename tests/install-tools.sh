#!/usr/bin/env bash
# The system tools some tests use (shells for the completion scripts, a roff linter, a JRE,
# kcat for the broker's client matrix) and kafkajs from npm into tests/broker/js (the Node
# client). Best effort: installs what is missing when run as root with apt-get (npm as anyone),
# and otherwise says what it skipped. The tests that need a missing tool skip with that reason.
set -u
wanted=(zsh:zsh fish:fish mandoc:mandoc java:default-jre-headless kcat:kcat)
missing=()
for pair in "${wanted[@]}"; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair##*:}")
done
install_kafkajs() {
  # kafkajs (pinned in tests/broker/js/package.json) for tests/broker/test_broker_node.py.
  local js; js="$(cd "$(dirname "$0")" && pwd)/broker/js"
  [ -d "$js/node_modules/kafkajs" ] && return 0
  if ! command -v npm >/dev/null 2>&1; then
    echo "tests/install-tools.sh: no npm; the kafkajs test will skip" >&2; return 0
  fi
  (cd "$js" && npm install --no-audit --no-fund --silent >/dev/null 2>&1) \
    || echo "tests/install-tools.sh: npm install failed; the kafkajs test will skip" >&2
}
[ ${#missing[@]} -eq 0 ] && { install_kafkajs; exit 0; }
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "tests/install-tools.sh: not root or no apt-get; tests needing ${missing[*]} will skip" >&2
  install_kafkajs
  exit 0
fi
echo "tests/install-tools.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
{ apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >/dev/null 2>&1 \
  || echo "tests/install-tools.sh: apt-get failed; tests needing ${missing[*]} will skip" >&2
install_kafkajs
exit 0
