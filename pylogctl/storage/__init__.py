"""Files and directories of a Kafka log dir, on top of :mod:`pylogctl.format`.

Entry points, from the top (what :mod:`pylogctl.groups`, the tools, the broker and the
pipeline call):

- :class:`.log_dir.LogDir`: one ``log.dirs`` entry as the offline commands see it (Kafka's
  ``LogManager`` for one dir): its partitions, checkpoints and ``.lock``; ``with_loaded_log``
  is the one way a command changes a partition (load, change, checkpoints, backups).
- :mod:`.loader` (Kafka's ``LogLoader``): ``plan_load`` says what a broker's start-up would do
  to a partition dir without writing; ``apply_load`` does it crash-safely. ``recover`` is that.
- :class:`.log.Log` (``UnifiedLog``) over :class:`.local_log.LocalLog` and
  :class:`.log_segments.LogSegments`: a loaded partition that appends, reads, truncates and
  rolls, for the broker and the mutating commands.
- :mod:`.cleaner` (``LogCleaner``), :mod:`.retention` and :mod:`.retention_plan`,
  :mod:`.truncation_plan`, :mod:`.delete_records`, :mod:`.replica_move` and
  :mod:`.leftover_moves`: what each mutating command decides, as plans first.
- :mod:`.list_offsets` (ListOffsets by time), :mod:`.producer_state` and
  :mod:`.producer_recovery` (producer state and snapshots), :mod:`.leader_epoch_cache`.
- The KRaft metadata image: :mod:`.metadata_loader` (snapshot then log, metadata
  transactions, where replay stops) builds :mod:`.metadata_image` by :mod:`.metadata_delta`'s
  rules; :mod:`.kraft_configs` is the view other commands read (configs, endpoints, epochs).
- Topic configs: :mod:`.topic_config_def` is the one definition (Kafka's ``LogConfig``
  ``ConfigDef`` and ``ServerTopicConfigSynonyms``); :mod:`.log_config` the configs the engine
  acts on; :mod:`.topic_config` a topic's effective values and their sources.

The floors they stand on:

- One segment: :class:`.segment.LogSegment` (``recover`` is the one recovery routine;
  :mod:`.recovery_hooks` what it calls back), :class:`.file_records.FileRecords`,
  :mod:`.offset_index`, :mod:`.time_index` and :mod:`.transaction_index` over :mod:`.index`,
  opened lazily (:mod:`.lazy_index`); :mod:`.segment_check` (read-only checks) and
  :mod:`.segment_swap` (replacing segments crash-safely); :mod:`.log_validator` and
  :mod:`.producer_append` for what one append does; :mod:`.log_offset_metadata`.
- Names and places, each decided once: :mod:`.naming` (file names and the offsets in them),
  :mod:`.log_dir_layout` (what a log dir and a partition dir look like),
  :mod:`.partition_paths` (what a command's PATH arguments name), :mod:`.checkpoint` (the text
  checkpoint files and which partitions get a log-start entry), :mod:`.metadata_files`
  (``meta.properties``, ``partition.metadata``, ``quorum-state``, the clean-shutdown marker).
- Safety and I/O: :mod:`.lock` (the ``.lock``), :mod:`.backup`, :mod:`.files` (opening files,
  the one mapping of OS errors, a missing path said first), :mod:`.clock` (the wall clock in ms).
- Object storage: :mod:`.filesystems` (URLs, listings and ranged reads over ``pyarrow.fs``),
  :mod:`.remote_mirror` (a local mirror for code that reads by path) and
  :mod:`.remote_records` (a remote segment's byte ranges).

Optional C loops (``_recover_scan`` beside :mod:`.segment`, ``cleaner/_cleaner_scan``) are
switched by :mod:`pylogctl.speedups`. Nothing here prints or imports the layers above.
"""
