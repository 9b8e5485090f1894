"""Library side of the subcommands: each returns plain data for :mod:`pylogctl.formatters`.

``metadata``: :mod:`.metadata` (the source and the views), :mod:`.metadata_nodes` (Kafka's node
tree of the image and its leaves' texts), :mod:`.metadata_shell` (kafka-metadata-shell's
commands and globs), :mod:`.metadata_check` (log dirs against the image).

Keys and values: :mod:`.decoders` (the decoders by name; the one rule for bytes in text output
is :mod:`pylogctl.format.readable_bytes`), :mod:`.schema_decoders` (Confluent wire-format Avro,
Protobuf and JSON Schema, with the schemas of a ``_schemas`` topic).

Groups: :mod:`.consumer_groups`, :mod:`.share_groups`, :mod:`.streams_groups` (the rows of
kafka-consumer-groups.sh and its share and streams siblings), :mod:`.group_changes` (resets
and deletions), :mod:`.group_columns` (their row keys: plain data the formatters share).
"""
