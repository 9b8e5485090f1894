"""Files and directories of a Kafka log dir, on top of :mod:`pylogctl.format`.

The KRaft metadata image: :mod:`.metadata_image` (the image), :mod:`.metadata_delta` (how
each record changes it, as Kafka's deltas replay it),
:mod:`.metadata_loader` (snapshot then log, metadata transactions, where replay stops), and
:mod:`.kraft_configs`, the configs, endpoints and leader epochs other commands read from it.

What recovering a segment would do is found by running the real ``LogSegment.recover``
read-only (:mod:`~pylogctl.storage.loader.recovery_dry_run`): the loader's plan and
``rebuild-index`` both ask it.

Log dirs in object storage and remote file systems are read through :mod:`.filesystems` (URLs,
listings, ranged reads over ``pyarrow.fs``), :mod:`.remote_mirror` (a local mirror for code
that reads by path) and :mod:`.remote_records` (a remote segment's byte ranges).

Topic configs: :mod:`.topic_config_def` is the one definition (names, types, defaults,
validators, broker synonyms, Kafka's ``LogConfig`` ``ConfigDef`` and
``ServerTopicConfigSynonyms``); :mod:`.log_config` the configs the engine acts on;
:mod:`.topic_config` a topic's effective values and their sources. Log-dir checkpoint names and
the log-start entry rule are :mod:`.checkpoint`'s; the wall clock is :mod:`.clock`'s.

What a command's PATH arguments name (a segment, a partition dir, a log dir, a dir of log dirs)
is decided once, by :mod:`.partition_paths`, on top of :mod:`.log_dir` and :mod:`.naming`.
"""
