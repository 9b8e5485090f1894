#!/usr/bin/env bash
# The system tools some tests use (shells for the completion scripts, a roff linter, a JRE and
# Maven, kcat for the broker's client matrix), kafkajs from npm into tests/broker/js (the Node
# client), and Apache Kafka's own jars from Maven Central into tests/apache_kafka/lib/<version>/
# (the pinned releases of tests/apache_kafka/pom.xml; cached: a version whose folder is
# complete is not resolved again), and the S3-compatible server the object-storage tests run
# (s3proxy, Apache-2.0, from Maven Central into tests/s3proxy/lib/; cached the same way), and
# the Azure Blob and GCS emulators (Azurite from npm, fake-gcs-server by go install). Best
# effort: installs what is missing when run as root with apt-get (npm, Maven and go as anyone),
# and otherwise says what it skipped. The tests that need a missing tool skip with that reason
# (.ci/run makes the Kafka jars, s3proxy and the emulators required).
set -u
# Kafka releases the differential tests run: the newest 4.x (every text format and the broker),
# the last 3.x (the pre-4.0 transaction-log text) and 3.7 (the pre-3.8 offsets text).
# kafka-shell is not published for every release: it has its own pin.
KAFKA_RELEASES=("4.4.0:4.3.1" "3.9.1:3.9.1" "3.7.2:3.7.2")
wanted=(zsh:zsh fish:fish mandoc:mandoc java:default-jre-headless mvn:maven kcat:kcat)
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
install_kafka_jars() {
  local here; here="$(cd "$(dirname "$0")" && pwd)/apache_kafka"
  if ! command -v mvn >/dev/null 2>&1; then
    echo "tests/install-tools.sh: no mvn; the tests judged by Apache Kafka will skip" >&2; return 0
  fi
  local pair version shell out
  for pair in "${KAFKA_RELEASES[@]}"; do
    version="${pair%%:*}" shell="${pair##*:}" out="$here/lib/$version"
    [ -f "$out/.complete" ] && continue
    rm -rf "$out"
    if (cd "$here" && mvn -q -B dependency:copy-dependencies -DincludeScope=runtime \
          -Dkafka.version="$version" -Dkafka.shell.version="$shell" \
          -DoutputDirectory="$out" >"$here/lib-$version.log" 2>&1); then
      touch "$out/.complete"; rm -f "$here/lib-$version.log"
    else
      echo "tests/install-tools.sh: Maven could not resolve Apache Kafka $version" \
           "(see tests/apache_kafka/lib-$version.log); its tests will skip" >&2
    fi
  done
}
# s3proxy (org.gaul:s3proxy, one self-contained jar) for tests/s3_server.py: pinned here.
S3PROXY_VERSION=2.6.0
install_s3proxy() {
  local out; out="$(cd "$(dirname "$0")" && pwd)/s3proxy/lib"
  [ -f "$out/s3proxy-$S3PROXY_VERSION-jar-with-dependencies.jar" ] && return 0
  if ! command -v mvn >/dev/null 2>&1; then
    echo "tests/install-tools.sh: no mvn; the object-storage tests will skip" >&2; return 0
  fi
  mkdir -p "$out"
  mvn -q -B dependency:copy \
      -Dartifact="org.gaul:s3proxy:$S3PROXY_VERSION:jar:jar-with-dependencies" \
      -DoutputDirectory="$out" >"$out/../lib.log" 2>&1 && rm -f "$out/../lib.log" \
    || echo "tests/install-tools.sh: Maven could not resolve s3proxy $S3PROXY_VERSION" \
            "(see tests/s3proxy/lib.log); the object-storage tests will skip" >&2
}
# The Azure Blob and GCS emulators for tests/object_stores.py: Azurite from npm (pinned in
# tests/object_stores/azurite/package.json) and fake-gcs-server built by go install (pinned here).
FAKE_GCS_VERSION=v1.56.1
install_store_emulators() {
  local here; here="$(cd "$(dirname "$0")" && pwd)/object_stores"
  if [ ! -x "$here/azurite/node_modules/.bin/azurite-blob" ]; then
    if command -v npm >/dev/null 2>&1; then
      (cd "$here/azurite" && npm install --no-audit --no-fund --silent >/dev/null 2>&1) \
        || echo "tests/install-tools.sh: npm install failed; the Azure Blob tests will skip" >&2
    else
      echo "tests/install-tools.sh: no npm; the Azure Blob tests will skip" >&2
    fi
  fi
  [ -x "$here/bin/fake-gcs-server" ] \
    && [ "$(cat "$here/bin/.version" 2>/dev/null)" = "$FAKE_GCS_VERSION" ] && return 0
  local go; go="$(command -v go || echo /usr/local/go/bin/go)"
  if [ ! -x "$go" ]; then
    echo "tests/install-tools.sh: no go; the GCS tests will skip" >&2; return 0
  fi
  GOBIN="$here/bin" "$go" install "github.com/fsouza/fake-gcs-server@$FAKE_GCS_VERSION" \
      >"$here/go-install.log" 2>&1 \
    && echo "$FAKE_GCS_VERSION" >"$here/bin/.version" && rm -f "$here/go-install.log" \
    || echo "tests/install-tools.sh: go install of fake-gcs-server failed" \
            "(see tests/object_stores/go-install.log); the GCS tests will skip" >&2
}
[ ${#missing[@]} -eq 0 ] && {
  install_kafkajs; install_kafka_jars; install_s3proxy; install_store_emulators; exit 0; }
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "tests/install-tools.sh: not root or no apt-get; tests needing ${missing[*]} will skip" >&2
  install_kafkajs
  install_kafka_jars
  install_s3proxy
  install_store_emulators
  exit 0
fi
echo "tests/install-tools.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
{ apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >/dev/null 2>&1 \
  || echo "tests/install-tools.sh: apt-get failed; tests needing ${missing[*]} will skip" >&2
install_kafkajs
install_kafka_jars
install_s3proxy
install_store_emulators
exit 0
