"""``pylogctl dump-segment`` judged by Apache Kafka's own ``kafka-dump-log``, byte for byte.

Every file of the real corpus and of a log dir the real Kafka 4.x broker wrote with real clients
(:mod:`kafka_scenarios`), every file kind and option: stdout must be identical, file by file.
Pre-4.0 text (``--legacy-format``) is compared with the release that printed it. Where Kafka's
tool itself fails on a file (docs/verified-against-kafka.md lists those), the case
leaves that file out and a test of its own pins what each tool does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_dump_compare import (DumpCase, compare, files_for, in_topic, scala_record_brace,
                                suffix)
from kafka_jvm import LEGACY_VERSION, OFFSETS_LEGACY_VERSION, require_kafka
from support import corpus_dirs

LOG = suffix(".log")
# Kafka 4.x's decoder classes (Kafka 3.x's kafka.serializer names are gone from 4.x; pylogctl
# takes both, tests/cli/test_cli_dump_decoders_vs_kafka.py checks the 3.x spelling)
DECODERS = "org.apache.kafka.tools.api."
STRING_DECODER = DECODERS + "StringDecoder"

CASES = [
    DumpCase("log-shallow", LOG),
    DumpCase("log-deep", LOG, ("--deep-iteration",)),
    DumpCase("log-print-data", LOG, ("--print-data-log",)),
    DumpCase("log-skip-metadata", LOG, ("--deep-iteration", "--skip-record-metadata",
                                        "--print-data-log")),
    DumpCase("log-max-bytes", LOG, ("--max-bytes", "5000", "--deep-iteration")),
    # the value's class left out: StringDecoder, Kafka's default for the optional argument
    DumpCase("log-decoder-classes", LOG, ("--key-decoder-class", STRING_DECODER,
                                          "--value-decoder-class")),
    # files whose every key and value is long enough for Kafka's fixed-size decoders (shorter
    # data kills Kafka's tool: see test_cli_dump_decoders_vs_kafka.py)
    DumpCase("offsets-integer-decoder", in_topic("__consumer_offsets", ".log"),
             ("--key-decoder-class", DECODERS + "IntegerDecoder",
              "--value-decoder-class", DECODERS + "IntegerDecoder")),
    DumpCase("transactions-long-decoder", in_topic("__transaction_state", ".log"),
             ("--key-decoder-class", DECODERS + "LongDecoder",
              "--value-decoder-class", DECODERS + "LongDecoder")),
    DumpCase("index", suffix(".index")),
    DumpCase("index-verify", suffix(".index"), ("--verify-index-only",)),
    DumpCase("index-sanity", suffix(".index"), ("--index-sanity-check",)),
    DumpCase("timeindex", suffix(".timeindex")),
    DumpCase("timeindex-verify", suffix(".timeindex"), ("--verify-index-only",)),
    DumpCase("timeindex-sanity", suffix(".timeindex"), ("--index-sanity-check",)),
    DumpCase("txnindex", suffix(".txnindex")),
    DumpCase("producer-snapshot", suffix(".snapshot")),
    DumpCase("kraft-snapshot", suffix(".checkpoint")),
    DumpCase("kraft-snapshot-decoded", suffix(".checkpoint"), ("--cluster-metadata-decoder",)),
    DumpCase("cluster-metadata", in_topic("__cluster_metadata", ".log"),
             ("--cluster-metadata-decoder",)),
    DumpCase("consumer-offsets", in_topic("__consumer_offsets", ".log"), ("--offsets-decoder",)),
    DumpCase("consumer-offsets-legacy", in_topic("__consumer_offsets", ".log"),
             ("--offsets-decoder",), OFFSETS_LEGACY_VERSION,
             ("--offsets-decoder", "--legacy-format"), scala_record_brace),
    DumpCase("transaction-state", in_topic("__transaction_state", ".log"),
             ("--transaction-log-decoder",)),
    DumpCase("transaction-state-legacy", in_topic("__transaction_state", ".log"),
             ("--transaction-log-decoder",), LEGACY_VERSION,
             ("--transaction-log-decoder", "--legacy-format"), scala_record_brace),
    DumpCase("share-group-state", in_topic("__share_group_state", ".log"),
             ("--share-group-state-decoder",)),
]


def _check(case: DumpCase, roots: list[Path]) -> None:
    require_kafka(case.version)
    files = files_for(roots, case.select)
    if not files:
        pytest.skip(f"no {case.name} files in {', '.join(r.name for r in roots)}")
    result = compare(case, files)
    assert not result.differing, result.report()


@pytest.mark.corpus
@pytest.mark.parametrize("case", [c for c in CASES if c.name != "share-group-state"],
                         ids=lambda c: c.name)
def test_corpus_dumps_as_kafka_dumps_them(case: DumpCase, corpus) -> None:
    _check(case, corpus_dirs())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_broker_written_dir_dumps_as_kafka_dumps_it(case: DumpCase, kafka_scenario) -> None:
    _check(case, [kafka_scenario.log_dir])


@pytest.mark.corpus
def test_coordinator_decoder_on_a_keyless_record_stops_where_kafka_dies(corpus) -> None:
    """Kafka's coordinator decoders throw on a record without a key and the tool dies with a
    stack trace mid-line; pylogctl stops at the same record with one line on stderr and exit 1.
    Its stdout is Kafka's up to the batch holding that record."""
    require_kafka()
    segment = next((corpus / "node-logx").glob("*/00000000000000000000.log"))
    case = DumpCase("offsets-on-data", lambda p: p == segment, ("--offsets-decoder",))
    result = compare(case, [segment])
    theirs = "".join(result.kafka.values())
    ours = "".join(result.ours.values())
    assert "Exception in thread \"main\" java.lang.RuntimeException: Failed to decode message " \
           "at offset 0" in result.kafka_stderr + theirs
    assert theirs.startswith(ours) and ours.count("\n") == 2
    assert result.ours_stderr.strip().splitlines() == [
        f"pylogctl: Failed to decode message at offset 0 using the specified decoder (message had "
        f"a missing key) ({segment}, byte position 0)"]
