// Kafka's own Java client (producer, consumer, Admin) through a fixed sequence of operations
// against one broker, printing one JSON line per operation with what the client saw: the
// results, or the exception's class when the broker refused. The test runs it against the
// real Kafka broker and against `pylogctl broker`, and compares the lines.
// Run as a single source file on the Kafka jars (or compiled once, as the tests do):
//   java -cp 'tests/apache_kafka/lib/4.4.0/*' ClientMatrix.java BOOTSTRAP
// Values that differ between any two clusters (cluster and topic ids, producer ids, clock
// times) are not printed.
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class ClientMatrix {
    // an hour ago: record times relative to it are printed, and the broker's retention
    // (7 days by default) keeps them
    static final long BASE_TS = (System.currentTimeMillis() / 1000 - 3600) * 1000;
    static String bootstrap;

    static String str(Object o) {
        return "\"" + String.valueOf(o).replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    static void line(String step, String json) {
        System.out.println("{\"step\":" + str(step) + "," + json + "}");
        System.out.flush();
    }

    interface Step { String run() throws Exception; }

    static void step(String name, Step s) {
        try {
            line(name, "\"ok\":" + s.run());
        } catch (Exception e) {
            Throwable t = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            line(name, "\"error\":" + str(t.getClass().getSimpleName()));
        }
    }

    static Properties props(Object... kv) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        for (int i = 0; i < kv.length; i += 2) p.put(kv[i], String.valueOf(kv[i + 1]));
        return p;
    }

    static KafkaProducer<String, String> producer(Object... kv) {
        Properties p = props(kv);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.putIfAbsent("linger.ms", "5");
        return new KafkaProducer<>(p);
    }

    static KafkaConsumer<String, String> consumer(Object... kv) {
        Properties p = props(kv);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.putIfAbsent("enable.auto.commit", "false");
        p.putIfAbsent("auto.offset.reset", "earliest");
        return new KafkaConsumer<>(p);
    }

    static String send(KafkaProducer<String, String> p, String topic, int partition, int first, int n)
            throws Exception {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (int i = first; i < first + n; i++) {
            ProducerRecord<String, String> r = new ProducerRecord<>(topic, partition, BASE_TS + i, "k" + i, "v" + i);
            r.headers().add("h", ("x" + i).getBytes());
            sent.add(p.send(r));
        }
        p.flush();
        List<Long> offsets = new ArrayList<>();
        for (Future<RecordMetadata> f : sent) offsets.add(f.get().offset());
        return offsets.toString();
    }

    /** Every record of the partitions from the start to the end offsets, as "offset:key=value@ts". */
    static String readAll(KafkaConsumer<String, String> c, List<TopicPartition> tps) {
        c.assign(tps);
        c.seekToBeginning(tps);
        Map<TopicPartition, Long> end = c.endOffsets(tps);
        List<String> got = new ArrayList<>();
        long deadline = System.currentTimeMillis() + 30_000;
        while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp)) && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                got.add(r.partition() + "/" + r.offset() + ":" + r.key() + "=" + r.value() + "@" + (r.timestamp() - BASE_TS)
                        + (r.headers().lastHeader("h") == null ? "" : "#" + new String(r.headers().lastHeader("h").value())));
            }
        }
        return "{\"records\":" + got.stream().map(ClientMatrix::str).collect(Collectors.joining(",", "[", "]"))
                + ",\"end\":" + str(new TreeMap<>(end.entrySet().stream().collect(Collectors.toMap(e -> e.getKey().toString(), Map.Entry::getValue)))) + "}";
    }

    static TopicPartition tp(String t, int p) { return new TopicPartition(t, p); }

    /** Poll every consumer until each has partitions and they hold {@code total} in all. */
    static String settle(List<KafkaConsumer<String, String>> consumers, int total) {
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            for (KafkaConsumer<String, String> c : consumers) c.poll(Duration.ofMillis(100));
            if (consumers.stream().allMatch(c -> !c.assignment().isEmpty())
                    && consumers.stream().mapToInt(c -> c.assignment().size()).sum() == total) break;
            if (System.currentTimeMillis() > deadline) throw new IllegalStateException("no settled assignment");
        }
        return consumers.stream().map(c -> c.groupMetadata().memberId().split("-")[0] + "="
                + c.assignment().stream().map(TopicPartition::partition).sorted().toList())
                .collect(Collectors.joining(" "));
    }

    static Object[] with(Object[] kv, Object... more) {
        Object[] all = Arrays.copyOf(kv, kv.length + more.length);
        System.arraycopy(more, 0, all, kv.length, more.length);
        return all;
    }

    /** Poll the named consumers until all have partitions, {@code total} in all; their sizes by name. */
    static String settleSizes(Map<String, KafkaConsumer<String, String>> consumers, int total) {
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            for (KafkaConsumer<String, String> c : consumers.values()) c.poll(Duration.ofMillis(100));
            if (consumers.values().stream().allMatch(c -> !c.assignment().isEmpty())
                    && consumers.values().stream().mapToInt(c -> c.assignment().size()).sum() == total) break;
            if (System.currentTimeMillis() > deadline) throw new IllegalStateException("no settled assignment");
        }
        return new TreeMap<>(consumers).entrySet().stream().map(e -> e.getKey() + "=" + e.getValue().assignment().size())
                .collect(Collectors.joining(" "));
    }

    /** A group's state, type and members (instance or client id, and how many partitions each owns). */
    static String describeMembers(Admin admin, String group) throws Exception {
        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
        return d.state() + " " + d.type() + " " + d.partitionAssignor() + " [" + d.members().stream()
                .map(m -> m.groupInstanceId().orElse(m.clientId()) + ":" + m.assignment().topicPartitions().size())
                .sorted().collect(Collectors.joining(",")) + "]";
    }

    static String describeGroup(Admin admin, String group) throws Exception {
        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
        return d.state() + " [" + d.members().stream().map(m -> m.groupInstanceId().orElse("-") + ":"
                + m.assignment().topicPartitions().size()).sorted().collect(Collectors.joining(",")) + "]";
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        try (Admin admin = Admin.create(props())) {
            step("create-topics", () -> {
                admin.createTopics(List.of(new NewTopic("m-codecs", 1, (short) 1),
                        new NewTopic("m-txn", 1, (short) 1), new NewTopic("m-groups", 2, (short) 1),
                        new NewTopic("m-gone", 1, (short) 1))).all().get();
                return "true";
            });
            step("create-existing-topic", () -> {
                admin.createTopics(List.of(new NewTopic("m-codecs", 1, (short) 1))).all().get();
                return "true";
            });
            int first = 0;
            for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) {
                final int at = first;
                step("produce-" + codec, () -> {
                    try (KafkaProducer<String, String> p = producer("compression.type", codec, "acks", "all")) {
                        return str(send(p, "m-codecs", 0, at, 10));
                    }
                });
                first += 10;
            }
            for (String acks : List.of("0", "1")) {
                final int at = first;
                step("produce-acks-" + acks, () -> {
                    try (KafkaProducer<String, String> p = producer("acks", acks, "enable.idempotence", "false")) {
                        return str(send(p, "m-codecs", 0, at, 5));
                    }
                });
                first += 5;
            }
            step("produce-too-large", () -> {
                try (KafkaProducer<String, String> p = producer("max.request.size", 4 * 1024 * 1024)) {
                    return str(p.send(new ProducerRecord<>("m-codecs", 0, "big", "x".repeat(2 * 1024 * 1024))).get().offset());
                }
            });
            step("read-codecs", () -> {
                try (KafkaConsumer<String, String> c = consumer()) {
                    return readAll(c, List.of(tp("m-codecs", 0)));
                }
            });
            step("transactions", () -> {
                try (KafkaProducer<String, String> p = producer("transactional.id", "m-tx", "acks", "all")) {
                    p.initTransactions();
                    p.beginTransaction();
                    send(p, "m-txn", 0, 0, 5);
                    p.commitTransaction();
                    p.beginTransaction();
                    send(p, "m-txn", 0, 5, 5);
                    p.abortTransaction();
                    p.beginTransaction();
                    send(p, "m-txn", 0, 10, 3);
                    p.commitTransaction();
                    return "true";
                }
            });
            step("read-committed", () -> {
                try (KafkaConsumer<String, String> c = consumer("isolation.level", "read_committed")) {
                    return readAll(c, List.of(tp("m-txn", 0)));
                }
            });
            step("read-uncommitted", () -> {
                try (KafkaConsumer<String, String> c = consumer("isolation.level", "read_uncommitted")) {
                    return readAll(c, List.of(tp("m-txn", 0)));
                }
            });
            step("list-transactions", () -> admin.listTransactions().all().get().stream()
                    .map(t -> str(t.transactionalId() + ":" + t.state()))
                    .sorted().collect(Collectors.joining(",", "[", "]")));
            step("describe-transaction", () -> {
                TransactionDescription d = admin.describeTransactions(List.of("m-tx")).description("m-tx").get();
                return str(d.state() + " timeout=" + d.transactionTimeoutMs() + " partitions=" + d.topicPartitions());
            });
            step("describe-missing-transaction", () ->
                    str(admin.describeTransactions(List.of("no-such-tx")).description("no-such-tx").get().state()));
            step("describe-producers", () -> admin.describeProducers(List.of(tp("m-txn", 0))).partitionResult(tp("m-txn", 0)).get()
                    .activeProducers().stream().map(s -> str("epoch=" + s.producerEpoch() + " lastSequence=" + s.lastSequence()
                            + " txnStart=" + s.currentTransactionStartOffset()))
                    .collect(Collectors.joining(",", "[", "]")));
            first = 0;
            for (int part = 0; part < 2; part++) {
                final int pp = part;
                step("produce-groups-" + part, () -> {
                    try (KafkaProducer<String, String> p = producer()) {
                        return str(send(p, "m-groups", pp, 0, 10));
                    }
                });
            }
            step("classic-group", () -> {
                try (KafkaConsumer<String, String> c = consumer("group.id", "m-classic")) {
                    c.subscribe(List.of("m-groups"));
                    int n = 0;
                    long deadline = System.currentTimeMillis() + 30_000;
                    while (n < 20 && System.currentTimeMillis() < deadline) n += c.poll(Duration.ofMillis(200)).count();
                    c.commitSync();
                    return str(n + " records, " + c.assignment().size() + " partitions");
                }
            });
            step("list-groups", () -> admin.listConsumerGroups().all().get().stream()
                    .map(g -> str(g.groupId() + ":" + g.type().map(Object::toString).orElse("?") + ":" + g.state().map(Object::toString).orElse("?")))
                    .sorted().collect(Collectors.joining(",", "[", "]")));
            step("describe-group", () -> {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of("m-classic")).all().get().get("m-classic");
                return str(d.state() + " members=" + d.members().size() + " type=" + d.type());
            });
            step("group-offsets", () -> str(new TreeMap<>(admin.listConsumerGroupOffsets("m-classic")
                    .partitionsToOffsetAndMetadata().get().entrySet().stream()
                    .collect(Collectors.toMap(e -> e.getKey().toString(), e -> e.getValue().offset())))));
            step("alter-group-offsets", () -> {
                admin.alterConsumerGroupOffsets("m-classic", Map.of(tp("m-groups", 0), new OffsetAndMetadata(3))).all().get();
                return str(admin.listConsumerGroupOffsets("m-classic").partitionsToOffsetAndMetadata().get().get(tp("m-groups", 0)).offset());
            });
            step("delete-group-offsets", () -> {
                admin.deleteConsumerGroupOffsets("m-classic", Set.of(tp("m-groups", 1))).all().get();
                return str(new TreeMap<>(admin.listConsumerGroupOffsets("m-classic").partitionsToOffsetAndMetadata().get()
                        .entrySet().stream().filter(e -> e.getValue() != null)
                        .collect(Collectors.toMap(e -> e.getKey().toString(), e -> e.getValue().offset()))));
            });
            step("delete-group", () -> {
                admin.deleteConsumerGroups(List.of("m-classic")).all().get();
                return str(admin.listConsumerGroups().all().get().stream().map(g -> g.groupId()).sorted().collect(Collectors.toList()));
            });
            for (Map.Entry<String, Supplier<OffsetSpec>> spec : new TreeMap<String, Supplier<OffsetSpec>>(Map.of(
                    "earliest", OffsetSpec::earliest, "latest", OffsetSpec::latest, "max-timestamp", OffsetSpec::maxTimestamp,
                    "for-timestamp", () -> OffsetSpec.forTimestamp(BASE_TS + 12))).entrySet()) {
                step("list-offsets-" + spec.getKey(), () -> {
                    ListOffsetsResult.ListOffsetsResultInfo i = admin.listOffsets(Map.of(tp("m-codecs", 0), spec.getValue().get()))
                            .partitionResult(tp("m-codecs", 0)).get();
                    return str(i.offset() + "@" + (i.timestamp() < 0 ? i.timestamp() : i.timestamp() - BASE_TS));
                });
            }
            step("offsets-for-times", () -> {
                try (KafkaConsumer<String, String> c = consumer()) {
                    OffsetAndTimestamp o = c.offsetsForTimes(Map.of(tp("m-codecs", 0), BASE_TS + 33)).get(tp("m-codecs", 0));
                    return str(o.offset() + "@" + (o.timestamp() - BASE_TS));
                }
            });
            step("delete-records", () -> str(admin.deleteRecords(Map.of(tp("m-codecs", 0), RecordsToDelete.beforeOffset(7)))
                    .lowWatermarks().get(tp("m-codecs", 0)).get().lowWatermark()));
            step("describe-cluster", () -> str(admin.describeCluster().nodes().get().size() + " nodes, controller "
                    + (admin.describeCluster().controller().get() != null)));
            step("describe-topics", () -> str(new TreeMap<>(admin.describeTopics(List.of("m-codecs", "m-groups")).allTopicNames().get()
                    .entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().partitions().size())))));
            ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, "m-codecs");
            step("alter-config", () -> {
                admin.incrementalAlterConfigs(Map.of(topic, List.of(new AlterConfigOp(new ConfigEntry("retention.ms", "12345"),
                        AlterConfigOp.OpType.SET)))).all().get();
                return "true";
            });
            step("describe-config", () -> {
                Map<String, ConfigEntry> c = admin.describeConfigs(List.of(topic)).all().get().get(topic).entries().stream()
                        .collect(Collectors.toMap(ConfigEntry::name, e -> e));
                return List.of("retention.ms", "cleanup.policy", "segment.bytes", "compression.type").stream()
                        .map(k -> str(k + "=" + c.get(k).value() + " (" + c.get(k).source() + ")"))
                        .collect(Collectors.joining(",", "[", "]"));
            });
            step("rebalance", () -> {
                admin.createTopics(List.of(new NewTopic("m-rebalance", 4, (short) 1))).all().get();
                List<String> seen = new ArrayList<>();
                try (KafkaConsumer<String, String> c1 = consumer("group.id", "m-rebalance", "client.id", "c1")) {
                    c1.subscribe(List.of("m-rebalance"));
                    seen.add(settle(List.of(c1), 4));
                    try (KafkaConsumer<String, String> c2 = consumer("group.id", "m-rebalance", "client.id", "c2")) {
                        c2.subscribe(List.of("m-rebalance"));
                        seen.add(settle(List.of(c1, c2), 4));
                    }
                    seen.add(settle(List.of(c1), 4));
                }
                return str(String.join(" | ", seen));
            });
            step("static-member", () -> {
                List<String> seen = new ArrayList<>();
                for (int round = 0; round < 2; round++) {
                    try (KafkaConsumer<String, String> s = consumer("group.id", "m-static", "client.id", "s",
                            "group.instance.id", "static-1")) {
                        s.subscribe(List.of("m-rebalance"));
                        seen.add(settle(List.of(s), 4) + " " + describeGroup(admin, "m-static"));
                    }
                }
                // a static member's close does not leave the group: it stays until removed
                seen.add(describeGroup(admin, "m-static"));
                admin.removeMembersFromConsumerGroup("m-static", new RemoveMembersFromConsumerGroupOptions(
                        List.of(new MemberToRemove("static-1")))).all().get();
                seen.add(describeGroup(admin, "m-static"));
                return str(String.join(" | ", seen));
            });
            // the KIP-848 consumer protocol: the same group operations, the assignment computed
            // by the broker's assignor and reached by heartbeats
            step("consumer-protocol-group", () -> {
                List<String> seen = new ArrayList<>();
                try (KafkaConsumer<String, String> c = consumer("group.id", "m-modern", "group.protocol", "consumer",
                        "client.id", "m1")) {
                    c.subscribe(List.of("m-groups"));
                    int n = 0;
                    long deadline = System.currentTimeMillis() + 30_000;
                    while (n < 20 && System.currentTimeMillis() < deadline) n += c.poll(Duration.ofMillis(200)).count();
                    c.commitSync();
                    seen.add(n + " records, " + c.assignment().size() + " partitions");
                    seen.add(describeMembers(admin, "m-modern"));
                }
                seen.add(describeMembers(admin, "m-modern"));
                return str(String.join(" | ", seen));
            });
            step("consumer-protocol-offsets", () -> str(new TreeMap<>(admin.listConsumerGroupOffsets("m-modern")
                    .partitionsToOffsetAndMetadata().get().entrySet().stream()
                    .collect(Collectors.toMap(e -> e.getKey().toString(), e -> e.getValue().offset())))));
            step("consumer-protocol-list", () -> admin.listConsumerGroups().all().get().stream()
                    .filter(g -> g.groupId().startsWith("m-modern"))
                    .map(g -> str(g.groupId() + ":" + g.type().map(Object::toString).orElse("?") + ":" + g.state().map(Object::toString).orElse("?")))
                    .sorted().collect(Collectors.joining(",", "[", "]")));
            for (String assignor : List.of("uniform", "range")) {
                step("consumer-protocol-rebalance-" + assignor, () -> {
                    List<String> seen = new ArrayList<>();
                    Object[] conf = {"group.id", "m-modern-" + assignor, "group.protocol", "consumer",
                            "group.remote.assignor", assignor};
                    try (KafkaConsumer<String, String> c1 = consumer(with(conf, "client.id", "c1"))) {
                        c1.subscribe(List.of("m-rebalance"));
                        seen.add(settleSizes(Map.of("c1", c1), 4));
                        try (KafkaConsumer<String, String> c2 = consumer(with(conf, "client.id", "c2"))) {
                            c2.subscribe(List.of("m-rebalance"));
                            seen.add(settleSizes(Map.of("c1", c1, "c2", c2), 4));
                            seen.add(describeMembers(admin, "m-modern-" + assignor));
                        }
                        seen.add(settleSizes(Map.of("c1", c1), 4));
                    }
                    return str(String.join(" | ", seen));
                });
            }
            step("consumer-protocol-regex", () -> {
                try (KafkaConsumer<String, String> c = consumer("group.id", "m-modern-regex", "group.protocol", "consumer",
                        "client.id", "r1")) {
                    c.subscribe(java.util.regex.Pattern.compile("m-reb.*"));
                    return str(settleSizes(Map.of("r1", c), 4) + " " + describeMembers(admin, "m-modern-regex"));
                }
            });
            step("consumer-protocol-static", () -> {
                List<String> seen = new ArrayList<>();
                for (int round = 0; round < 2; round++) {
                    try (KafkaConsumer<String, String> s = consumer("group.id", "m-modern-static", "group.protocol", "consumer",
                            "client.id", "s", "group.instance.id", "static-2")) {
                        s.subscribe(List.of("m-rebalance"));
                        seen.add(settleSizes(Map.of("s", s), 4));
                    }
                    // a static member's close leaves for now: it keeps its instance id and partitions
                    seen.add(describeMembers(admin, "m-modern-static"));
                }
                admin.removeMembersFromConsumerGroup("m-modern-static", new RemoveMembersFromConsumerGroupOptions(
                        List.of(new MemberToRemove("static-2")))).all().get();
                seen.add(describeMembers(admin, "m-modern-static"));
                return str(String.join(" | ", seen));
            });
            step("consumer-protocol-unknown-assignor", () -> {
                try (KafkaConsumer<String, String> c = consumer("group.id", "m-modern-bad", "group.protocol", "consumer",
                        "group.remote.assignor", "sticky")) {
                    c.subscribe(List.of("m-rebalance"));
                    long deadline = System.currentTimeMillis() + 30_000;
                    while (System.currentTimeMillis() < deadline) c.poll(Duration.ofMillis(200));
                    return "\"polled\"";
                }
            });
            step("consumer-protocol-delete", () -> {
                admin.deleteConsumerGroups(List.of("m-modern", "m-modern-uniform", "m-modern-range", "m-modern-regex",
                        "m-modern-static")).all().get();
                return str(admin.listConsumerGroups().all().get().stream().map(g -> g.groupId())
                        .filter(g -> g.startsWith("m-modern")).sorted().collect(Collectors.toList()));
            });
            step("delete-topic", () -> {
                admin.deleteTopics(List.of("m-gone")).all().get();
                return str(admin.listTopics().names().get().stream().filter(t -> t.startsWith("m-")).sorted().collect(Collectors.toList()));
            });
        }
    }
}
