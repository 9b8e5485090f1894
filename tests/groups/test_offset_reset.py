"""``--reset-offsets`` planning: the argument parsers (Kafka's formats), what ListOffsets would
answer from the files, and each scenario's rules, on a synthetic cluster whose numbers are
known."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groups_support import OffsetsLog, member
from pylogctl.errors import UsageError
from pylogctl.format.builder import RecordBatchBuilder
from pylogctl.groups.end_offsets import EndOffsets
from pylogctl.groups.offset_commits import TopicPartition
from pylogctl.groups.offset_reset import (LogOffsets, ResetPlanner, ResetSpec, export_csv,
                                          parse_datetime, parse_duration, parse_reset_csv,
                                          parse_topic_args)
from pylogctl.groups.partitioner import partition_for
from pylogctl.groups.replicas import LogDirs
from pylogctl.tools.consumer_groups import ConsumerGroups

T0 = 1_700_000_000_000


# -- parsers ---------------------------------------------------------------------------------
@pytest.mark.parametrize("text, ms", [
    ("2023-11-14T22:13:20.000", T0),  # no zone: UTC, as Kafka appends "Z"
    ("2023-11-14T22:13:20.123Z", T0 + 123),
    ("2023-11-15T00:13:20.000+02:00", T0),
    ("2023-11-15T00:13:20.000+0200", T0),
    ("2023-11-14T20:13:20.000-02", T0),
    ("1970-01-01T00:00:00.000", 0),
])
def test_datetimes_parse_as_kafkas_utils_get_date_time(text, ms):
    assert parse_datetime(text) == ms


@pytest.mark.parametrize("text", ["2023-11-14", "2023-11-14T22:13:20", "2023-11-14T22:13",
                                  "yesterdayT12", "2023-13-14T22:13:20.000"])
def test_malformed_datetimes_are_usage_errors(text):
    with pytest.raises(UsageError):
        parse_datetime(text)


@pytest.mark.parametrize("text, ms", [
    ("PT1H", 3_600_000), ("P1D", 86_400_000), ("P1DT2H3M4S", 93_784_000), ("PT0.5S", 500),
    ("-PT5M", -300_000), ("pt10m", 600_000), ("PT-1M", -60_000), ("PT1.001S", 1001),
])
def test_durations_parse_as_java_duration(text, ms):
    assert parse_duration(text) == ms


@pytest.mark.parametrize("text", ["", "P", "PT", "1H", "P1H", "PT1D", "P1DT"])
def test_malformed_durations_are_usage_errors(text):
    with pytest.raises(UsageError, match="cannot be parsed to a Duration"):
        parse_duration(text)


def test_topic_args_take_kafkas_topic_colon_partitions_form():
    assert parse_topic_args(["a", "b:0,2", "c:+1"]) == [("a", None), ("b", [0, 2]), ("c", [1])]
    with pytest.raises(UsageError, match="expected topic name and partitions"):
        parse_topic_args(["a:0:1"])
    with pytest.raises(UsageError, match="Invalid partition 'x' specified in topic arg 'a:x''"):
        parse_topic_args(["a:x"])


@given(st.dictionaries(st.tuples(st.sampled_from(["g1", "g,2", 'g"3']),
                                 st.sampled_from(["t", "u.v"]), st.integers(0, 99)),
                       st.integers(0, 2**62), max_size=20))
def test_an_exported_plan_reads_back_through_from_file(entries):
    from pylogctl.groups.offset_reset import GroupReset

    by_group: dict[str, dict[TopicPartition, int]] = {}
    for (g, t, p), o in entries.items():
        by_group.setdefault(g, {})[TopicPartition(t, p)] = o
    resets = [GroupReset(g, "Empty", offsets) for g, offsets in by_group.items()]
    assert parse_reset_csv(export_csv(resets, single_group=False), None) == by_group
    for g, offsets in by_group.items():
        single = export_csv([GroupReset(g, "Empty", offsets)], single_group=True)
        assert parse_reset_csv(single, g) == {g: offsets}


# -- a synthetic cluster -----------------------------------------------------------------------
def _data(log_dir: Path, topic: str, partition: int, batches: list[tuple[int, list[int]]]
          ) -> None:
    """``batches``: (base offset, record timestamps) written into one segment."""
    path = log_dir / f"{topic}-{partition}"
    path.mkdir()
    data = b""
    for base, stamps in batches:
        builder = RecordBatchBuilder(base_offset=base)
        for ts in stamps:
            builder.append(ts, b"k", b"v")
        data += builder.build()
    (path / f"{batches[0][0]:020d}.log").write_bytes(data)


@pytest.fixture
def cluster(tmp_path) -> Path:
    """t-0: offsets 10..19 (timestamps T0+0..9 s), HW 18, log start 12 (checkpoint); t-1:
    offsets 0..4 at T0+100 s, HW 5; group "idle" (no registration) committed t-0 at 15;
    group "busy" is Stable, committed t-0 at 11."""
    log_dir = tmp_path / "broker"
    log_dir.mkdir()
    (log_dir / "meta.properties").write_text("version=0\nbroker.id=1\n")
    _data(log_dir, "t", 0, [(10, [T0 + i * 1000 for i in range(5)]),
                            (15, [T0 + i * 1000 for i in range(5, 10)])])
    _data(log_dir, "t", 1, [(0, [T0 + 100_000] * 5)])
    (log_dir / "replication-offset-checkpoint").write_text("0\n2\nt 0 18\nt 1 5\n")
    (log_dir / "log-start-offset-checkpoint").write_text("0\n1\nt 0 12\n")
    for name, committed in (("idle", 15), ("busy", 11)):
        log = OffsetsLog(log_dir, partition_for(name, 1))
        log.commit(name, {("t", 0): committed})
        if name == "busy":
            log.group(name, [member("m1", {"t": [0, 1]})])
    return log_dir


def plan(log_dir: Path, spec: ResetSpec, group: str = "idle", lag_from: str = "hw",
         partitions=None, now_ms: int = T0 + 200_000):
    groups = ConsumerGroups([log_dir], lag_from)  # type: ignore[arg-type]
    loaded = groups.load_groups([group])
    planner = ResetPlanner(LogOffsets(groups.log_dirs, groups.end_offsets), spec, now_ms)
    wanted = partitions or [TopicPartition("t", 0), TopicPartition("t", 1)]
    return planner.plan_groups(loaded, [group], lambda g, grp: wanted)


def offsets_of(result) -> dict[tuple[str, int], int]:
    (reset,) = result.resets
    return {(tp.topic, tp.partition): o for tp, o in reset.offsets.items()}


def test_earliest_is_the_log_start_and_latest_the_high_watermark(cluster):
    assert offsets_of(plan(cluster, ResetSpec("to-earliest"))) == {("t", 0): 12, ("t", 1): 0}
    assert offsets_of(plan(cluster, ResetSpec("to-latest"))) == {("t", 0): 18, ("t", 1): 5}
    assert offsets_of(plan(cluster, ResetSpec("to-latest"), lag_from="leo")) == {
        ("t", 0): 20, ("t", 1): 5}


def test_to_offset_and_shift_by_are_clamped_into_the_log_with_a_note(cluster):
    result = plan(cluster, ResetSpec("to-offset", 100))
    assert offsets_of(result) == {("t", 0): 18, ("t", 1): 5}
    assert "New offset (100) is higher than latest offset for topic partition t-0. Value will " \
           "be set to 18" in result.notes
    result = plan(cluster, ResetSpec("shift-by", -5), partitions=[TopicPartition("t", 0)])
    assert offsets_of(result) == {("t", 0): 12}  # 15 - 5 = 10, below the log start
    assert any("lower than earliest offset" in n for n in result.notes)
    assert offsets_of(plan(cluster, ResetSpec("shift-by", 2),
                           partitions=[TopicPartition("t", 0)])) == {("t", 0): 17}


def test_shift_by_needs_a_committed_offset(cluster):
    with pytest.raises(UsageError, match="Cannot shift offset for partition t-1 since there "
                                         "is no current committed offset"):
        plan(cluster, ResetSpec("shift-by", 1))


def test_to_current_keeps_commits_and_takes_latest_elsewhere(cluster):
    assert offsets_of(plan(cluster, ResetSpec("to-current"))) == {("t", 0): 15, ("t", 1): 5}


def test_by_time_finds_the_first_record_at_or_after_the_time(cluster):
    assert offsets_of(plan(cluster, ResetSpec("to-datetime", T0 + 6500))) == {
        ("t", 0): 17, ("t", 1): 0}
    # before the log start: the first offset from the log start on
    assert offsets_of(plan(cluster, ResetSpec("to-datetime", 0))) == {("t", 0): 12, ("t", 1): 0}
    # by-duration counts back from now
    assert offsets_of(plan(cluster, ResetSpec("by-duration", 200_000 - 7000))) == {
        ("t", 0): 17, ("t", 1): 0}


def test_by_time_past_the_high_watermark_falls_back_to_latest_with_kafkas_warning(cluster):
    result = plan(cluster, ResetSpec("to-datetime", T0 + 8500))  # offset 18 = the HW
    assert offsets_of(result) == {("t", 0): 18, ("t", 1): 0}
    assert "Warn: Partition 0 from topic t is empty. Falling back to latest known offset." \
        in result.messages


def test_a_group_that_is_not_empty_is_refused_with_kafkas_error(cluster):
    result = plan(cluster, ResetSpec("to-earliest"), group="busy")
    (reset,) = result.resets
    assert reset.offsets == {} and reset.state == "Stable"
    assert result.messages == ["Error: Assignments can only be reset if the group 'busy' is "
                               "inactive, but the current state is Stable."]


def test_an_unknown_group_is_dead_and_may_be_reset(cluster):
    result = plan(cluster, ResetSpec("to-earliest"), group="newcomer")
    assert result.resets[0].state == "Dead"
    assert offsets_of(result) == {("t", 0): 12, ("t", 1): 0}


def test_from_file_takes_the_groups_plan_and_clamps_it(cluster):
    spec = ResetSpec("from-file", plan={"idle": {TopicPartition("t", 0): 3}})
    result = plan(cluster, spec)
    assert offsets_of(result) == {("t", 0): 12}
    result = plan(cluster, ResetSpec("from-file", plan={}))
    assert result.messages == ["Error: No reset plan for group idle found"]


def test_a_partition_in_no_log_dir_has_no_earliest(cluster):
    with pytest.raises(UsageError, match="Error getting starting offset of topic partition: "
                                         "t-7"):
        plan(cluster, ResetSpec("to-earliest"), partitions=[TopicPartition("t", 7)])


def test_log_offsets_read_the_chosen_replica(cluster):
    dirs = LogDirs([cluster])
    offsets = LogOffsets(dirs, EndOffsets(dirs))
    tp = TopicPartition("t", 0)
    assert (offsets.earliest(tp), offsets.latest(tp)) == (12, 18)
    assert offsets.for_timestamp(tp, T0 + 4000) == 14
    assert offsets.for_timestamp(tp, T0 + 99_000) is None
    assert not offsets.exists(TopicPartition("nope", 0))
