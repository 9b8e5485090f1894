"""Loading a partition dir as a broker starts it: Kafka's ``LogLoader``, planned then applied.

Entry points:

- :func:`.log_loader.plan_load` reads a partition dir and returns a :class:`.plan.LoadPlan`:
  every step Kafka's ``LogLoader.load`` would take, decided without writing a byte.
  ``recover --dry-run`` prints it; ``recover`` carries it out.
- :func:`.apply.apply_load` carries a plan out crash-safely, refusing one the files have moved
  on from.
- :func:`.loaded_segments.open_loaded_segments`: the segments as the load would leave them,
  for readers that must see what a broker would serve.
- :mod:`.recovery_dry_run`: ``LogSegment.recover`` run read-only into scratch indexes, the one
  answer to "what would recovery change" (the plan and ``rebuild-index`` both ask it).

The phases, in Kafka's order: :mod:`.swaps` (temporary and ``.swap`` files, phases 1 to 4),
:mod:`.recovery` (segments recovered, phases 5 to 7), :mod:`.segment_split` (offset overflow,
KAFKA-6264), :mod:`.producer_state_rebuild` (``rebuildProducerState``) and :mod:`.raft` (what
``KafkaRaftLog`` then does to ``__cluster_metadata-0``). :class:`.planner.LoadPlanner` carries
the state between phases; :mod:`.view` is the partition dir as the phases leave it, unwritten.

Floors: :mod:`pylogctl.storage.segment` (``LogSegment``), :mod:`pylogctl.storage.naming`,
:mod:`pylogctl.storage.producer_recovery`, :mod:`pylogctl.storage.leader_epoch_cache`.
"""
