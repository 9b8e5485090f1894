"""The log cleaner, offline and in the broker: Kafka's ``LogCleaner`` family.

Entry points:

- :func:`.cleaner_manager.clean_log` and :func:`.cleaner_manager.decide`: which logs of a log
  dir get cleaned and how far (Kafka's ``LogCleanerManager``); ``pylogctl compact`` and the
  broker's cleaner thread both call them.
- :class:`.cleaner.Cleaner`: one cleaning of one log (``Cleaner.doClean``), over a
  :class:`.cleaner_log.CleanerLog` (the partition as the cleaner sees it).
- :class:`.cleaner_config.CleanerConfig`: the broker's ``log.cleaner.*`` settings.

Beneath them: :mod:`.log_to_clean` (the cleanable range and dirtiness), :mod:`.offset_map`
(``SkimpyOffsetMap``), :mod:`.cleaner_filter` (``logCleanerFilter``: what a cleaning keeps),
:mod:`.cleaned_txn` (``CleanedTransactionMetadata``) and ``_cleaner_scan.c``, the optional C
loops of both passes (switched by :mod:`pylogctl.speedups`).

Floors: :mod:`pylogctl.storage.segment`, :mod:`pylogctl.storage.segment_swap` (the crash-safe
replacement of segments, shared with the loader), :mod:`pylogctl.storage.checkpoint`.
"""
