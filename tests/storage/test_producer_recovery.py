"""What the loader plans for producer snapshots matches what Kafka's procedures do to them."""

from __future__ import annotations

from pylogctl.storage.loader.plan import RebuildProducerState
from pylogctl.storage.loader.log_loader import apply_load, plan_load
from pylogctl.storage.producer_recovery import predict_rebuild, stray_snapshots
from load_support import copy_partition, plan_for


def always(_offset: int) -> bool:
    return True


def test_stray_snapshots_keep_only_the_newest_one_above_every_segment():
    assert stray_snapshots([0, 5, 10, 12, 20], [0, 10]) == [5, 12]
    assert stray_snapshots([5, 12], [0, 20]) == [5, 12]
    assert stray_snapshots([3, 7], []) == [3]  # with no segment the newest stray stays


def test_a_replay_writes_snapshots_at_the_last_two_segment_bases_and_the_end():
    p = predict_rebuild([], always, [0, 100, 200], 0, 250, False)
    assert (p.loaded, p.replay_from, p.written) == (None, 0, (100, 200, 250))
    p = predict_rebuild([200], always, [0, 100, 200], 0, 250, False)
    assert (p.loaded, p.replay_from, p.written) == (200, 200, (250,))


def test_snapshots_outside_the_log_are_deleted_and_unreadable_ones_skipped():
    p = predict_rebuild([0, 150, 300], lambda o: o != 150, [0, 100, 150], 0, 200, False)
    assert dict(p.deleted) == {0: "at or below the log start offset 0",
                               300: "above the log end offset 200",
                               150: "unreadable (corrupt)"}
    assert (p.loaded, p.replay_from, p.written) == (None, 0, (100, 150, 200))
    assert p.final == {100, 150, 200}


def test_the_clean_restart_oscillation_of_an_empty_log_settles():
    # an empty log at log start 5: the snapshot at 5 is dropped (<= log start), and the next
    # clean start, finding none, writes it again
    first = predict_rebuild([5], always, [5], 5, 5, True)
    assert first.final == frozenset()
    second = predict_rebuild(first.final, always, [5], 5, 5, True)
    assert second.final == {5}


def test_a_corrupt_snapshot_is_replaced_by_a_replay(corpus, tmp_path):
    log_dir, part = copy_partition(corpus, "invoice-multiseg", "invoice-0", tmp_path)
    (part / "00000000000000090867.snapshot").write_bytes(b"\x00\x01garbage")
    plan, kwargs = plan_for(log_dir, part)
    step = [s for s in plan.steps if isinstance(s, RebuildProducerState)][0]
    assert dict(step.deleted)[90867] == "unreadable (corrupt)"
    assert step.loaded_snapshot == 60611 and step.written == (90867, 100294)
    assert apply_load(plan).notes == ()
    assert plan_load(part, **kwargs).is_empty
