"""Step 10 of the load, Kafka's ``rebuildProducerState``, as the snapshot files it changes.

:mod:`pylogctl.storage.producer_recovery` predicts what Kafka's rebuild does; this turns the
prediction into plan steps. It plans two consecutive loads (why is explained there) and compares
by content, so a load whose rebuild would leave the same snapshots plans nothing.
"""

from __future__ import annotations

import os

from .plan import DeleteSnapshot, RebuildProducerState
from .planner import LoadPlanner
from ..producer_recovery import predict_rebuild, snapshot_entries


def plan_producer_state(p: LoadPlanner, bases: list[int], log_start: int, log_end: int) -> None:
    """Step 10 of this load and of the next one: what differs from the snapshot files now, by
    content (a file replaced by an identical empty snapshot is no change; one replacing an
    unreadable file is)."""
    snapshots = p.snapshots()
    producers = {o: snapshot_entries(path) for o, path in snapshots.items()}
    state = {o: "on disk" for o in snapshots}  # offset -> "on disk", "empty" or "replayed"
    why: dict[int, str] = {}
    passes = []
    for n in range(2):
        prediction = predict_rebuild(state, lambda o: state[o] != "on disk" or
                                     producers[o] is not None, bases, log_start, log_end,
                                     p.inputs.had_clean_shutdown)
        for offset in prediction.stray:
            why.setdefault(offset, "a stray snapshot: no segment starts at its offset and it is "
                           "not the newest one above every segment (removeStraySnapshots)"
                           + (" once the log-end snapshot exists (Kafka's next start)" if n else ""))
        for offset, reason in prediction.deleted:
            why.setdefault(offset, reason)
        made = "empty" if prediction.upgrade else "replayed"
        state = {o: made if o in prediction.written else state[o] for o in prediction.final}
        passes.append(prediction)
    written = tuple(sorted(o for o, how in state.items() if how != "on disk" and not (
        how == "empty" and producers.get(o) == 0)))
    gone = sorted(o for o in snapshots if o not in state or o in written)
    if not gone and not written:
        return
    for offset in passes[0].stray:
        if offset in gone:
            p.steps.append(DeleteSnapshot(offset, snapshots[offset], why[offset],
                                          stray=True))
            p.view.delete(os.path.basename(snapshots[offset]))
    deleted = tuple((o, why.get(o, "replaced")) for o in gone if o not in passes[0].stray)
    first = passes[0]
    if first.replay_from is None:
        how = ("no snapshot to load" if first.loaded is None else
               f"the snapshot at {first.loaded} is current")
    else:
        loaded = "nothing" if first.loaded is None else f"the snapshot at {first.loaded}"
        how = f"load {loaded} and replay the batches from {first.replay_from}"
    if passes[1].written or passes[1].stray or passes[1].deleted:
        how += "; the next start's pass is included (Kafka would change these files again then)"
    if deleted or written:
        p.steps.append(RebuildProducerState(log_end, first.loaded, first.replay_from, deleted,
                                            written, f"rebuildProducerState: {how}"))
