"""Kafka's byte formats: bytes in, typed objects out (and back). No files, no printing."""
