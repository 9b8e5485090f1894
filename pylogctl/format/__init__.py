"""Kafka's byte formats: bytes in, typed objects out (and back). No files, no printing.

Besides Kafka's own: :mod:`.confluent_wire`, the framing of Schema Registry's serializers, and
:mod:`.readable_bytes`, pylogctl's one rule for bytes in text output.

Java behaviours Kafka's output depends on live here too, below every other layer:
:mod:`.java_string` (modified UTF-8), :mod:`.jackson` (Jackson's JSON rendering),
:mod:`.java_collections` (``HashMap`` iteration order); Java's integer bounds are
:mod:`.varint`'s ``INT32_*``/``INT64_*``.
"""
