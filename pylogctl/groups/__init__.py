"""Consumer groups from the broker's files: ``__consumer_offsets`` replayed as the group
coordinator loads it, and the end offsets of the partitions the groups consume.

:mod:`.partitioner` says where a group lives, :mod:`.replicas` which broker's copy of a
partition to read, :mod:`.replay` and :mod:`.group_loader` rebuild the groups of a partition
(:mod:`.group_metadata`, :mod:`.consumer_group`, :mod:`.share_group`, :mod:`.streams_group`,
:mod:`.offset_commits`; :mod:`.share_group_state` replays ``__share_group_state``;
:mod:`.java_hash_map` gives Kafka's iteration orders), :mod:`.offsets_topic`
loads the partitions asked for, :mod:`.end_offsets` reads where the consumed partitions end,
and :mod:`.committed_offsets` measures each group's commits against those ends (the lag that
``consumer-groups`` and ``stats`` show).

Transactions: :mod:`.transaction_state_topic` loads ``__transaction_state`` as the transaction
coordinator does (each id's :mod:`.transaction_metadata`, shared with the broker),
:mod:`.producer_states` reads a partition's producer state at its log end, and
:mod:`.hanging_transactions` finds the transactions no coordinator will end (KIP-664), and
:mod:`.transaction_abort` ends them with a marker.
Offsets: :mod:`.list_offsets` answers ListOffsets (``kafka-get-offsets``) from a partition's
files, and :mod:`.delete_records` raises log start offsets as DeleteRecords does on every
in-step replica.
Replicas: :mod:`.replica_divergence` compares every broker's copy of a partition against the
leader's (the best replica, or one to elect), each truncated as a follower would
(:mod:`.follower_truncation`, OffsetsForLeaderEpoch of KIP-101/279).
Schemas: :mod:`.schemas_topic` reads a Schema Registry's ``_schemas`` topic as its
``KafkaStore`` does.
Nothing here prints; only the appends and :mod:`.delete_records` write: :mod:`.replica_append` appends batches to every
in-step replica (:mod:`.offsets_append` the groups' records, :mod:`.transaction_abort` the
markers).
"""
