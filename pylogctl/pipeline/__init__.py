"""Bulk jobs over log dirs: scans and statistics, on one process or on Spark.

A log dir fleet is read as *splits*: one per segment file, or several per large segment cut at
offset-index positions (:mod:`.plan`). Each split is decoded by the engine's own batch and
record readers into columns (:mod:`.segment_reader`). The local engine (:mod:`.local_engine`)
walks the splits in this process; the Spark engine (:mod:`.spark_engine`) hands them to the
``kafka-log`` PySpark data source (:mod:`.datasource`), whose tasks run the same reader on
executors, in a session :mod:`.spark_session` finds or starts (local, a cluster's master,
``spark-submit``'s, or a Spark Connect server's). Both therefore return the same rows, and
:mod:`.stats` computes the same statistics from them. A log dir in object storage (a URL) is
planned from a sparse mirror of its small files, and its splits are a URL and a byte range,
fetched by ranged reads wherever they run.

Nothing here imports PySpark or pyarrow at module level: only :mod:`.datasource`,
:mod:`.spark_session` and :mod:`.spark_engine` load PySpark, and only when the Spark engine is
used, so the CLI stays fast and the local engine runs without either installed.
"""
