"""Kafka's byte formats: bytes in, typed objects out (and back). No files, no printing.

Besides Kafka's own: :mod:`.confluent_wire`, the framing of Schema Registry's serializers.
"""
