// What a real Kafka broker serves: every record of every topic (Kafka's Java consumer, no
// group, from the log start to the end offset the broker reports) and every consumer group's
// committed offsets (Kafka's Admin client), as JSON lines for the round-trip tests. It first
// waits until no transaction is open (the broker aborts those that timed out).
// Run as a single source file on the Kafka jars:
//   java -cp 'tests/apache_kafka/lib/4.4.0/*' ServedRecords.java BOOTSTRAP ISOLATION
// ISOLATION is read_committed or read_uncommitted. Lines:
//   {"topic":T,"partition":P,"offset":O,"timestamp":TS,"key":HEX|null,"value":HEX|null,"headers":[[K,HEX|null],...]}
//   {"group":G,"topic":T,"partition":P,"committed":O,"leaderEpoch":E|null}   (consumer groups)
//   {"start":{"T-P":O,...},"end":{"T-P":O,...}}
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class ServedRecords {
    static String hex(byte[] b) {
        return b == null ? "null" : "\"" + HexFormat.of().formatHex(b) + "\"";
    }

    static String str(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        try (Admin admin = Admin.create(props)) {
            // a transaction left open by a killed producer is aborted once it times out: wait
            // for that, so that what read_committed sees does not depend on the timing
            long settle = System.currentTimeMillis() + 90_000;
            while (admin.listTransactions().all().get().stream().anyMatch(t ->
                    Set.of(TransactionState.ONGOING, TransactionState.PREPARE_ABORT,
                           TransactionState.PREPARE_COMMIT).contains(t.state()))) {
                if (System.currentTimeMillis() > settle) throw new IllegalStateException("a transaction never completed");
                Thread.sleep(200);
            }
            Set<String> topics = admin.listTopics().names().get();
            List<TopicPartition> partitions = new ArrayList<>();
            for (TopicDescription d : admin.describeTopics(topics).allTopicNames().get().values()) {
                d.partitions().forEach(p -> partitions.add(new TopicPartition(d.name(), p.partition())));
            }
            partitions.sort((a, b) -> a.toString().compareTo(b.toString()));
            Properties c = new Properties();
            c.put("bootstrap.servers", args[0]);
            c.put("isolation.level", args[1]);
            c.put("enable.auto.commit", "false");
            c.put("key.deserializer", ByteArrayDeserializer.class.getName());
            c.put("value.deserializer", ByteArrayDeserializer.class.getName());
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
                consumer.assign(partitions);
                consumer.seekToBeginning(partitions);
                Map<TopicPartition, Long> start = consumer.beginningOffsets(partitions);
                Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
                long deadline = System.currentTimeMillis() + 60_000;
                while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                    if (System.currentTimeMillis() > deadline) throw new IllegalStateException("never reached the end offsets");
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                        StringBuilder h = new StringBuilder("[");
                        for (Header header : r.headers()) {
                            if (h.length() > 1) h.append(",");
                            h.append("[").append(str(header.key())).append(",").append(hex(header.value())).append("]");
                        }
                        System.out.println("{\"topic\":" + str(r.topic()) + ",\"partition\":" + r.partition()
                            + ",\"offset\":" + r.offset() + ",\"timestamp\":" + r.timestamp()
                            + ",\"key\":" + hex(r.key()) + ",\"value\":" + hex(r.value())
                            + ",\"headers\":" + h + "]}");
                    }
                }
                StringBuilder line = new StringBuilder("{\"start\":{");
                TreeMap<String, Long> s = new TreeMap<>(), e = new TreeMap<>();
                start.forEach((tp, o) -> s.put(tp.toString(), o));
                end.forEach((tp, o) -> e.put(tp.toString(), o));
                s.forEach((k, v) -> line.append(line.charAt(line.length() - 1) == '{' ? "" : ",").append(str(k)).append(":").append(v));
                line.append("},\"end\":{");
                e.forEach((k, v) -> line.append(line.charAt(line.length() - 1) == '{' ? "" : ",").append(str(k)).append(":").append(v));
                System.out.println(line + "}}");
            }
            for (GroupListing g : admin.listGroups().all().get()) {
                if (g.type().isPresent() && !Set.of(GroupType.CLASSIC, GroupType.CONSUMER).contains(g.type().get())) continue;
                Map<TopicPartition, OffsetAndMetadata> offsets =
                    admin.listConsumerGroupOffsets(g.groupId()).partitionsToOffsetAndMetadata().get();
                for (Map.Entry<TopicPartition, OffsetAndMetadata> o : offsets.entrySet()) {
                    if (o.getValue() == null) continue;
                    System.out.println("{\"group\":" + str(g.groupId()) + ",\"topic\":" + str(o.getKey().topic())
                        + ",\"partition\":" + o.getKey().partition() + ",\"committed\":" + o.getValue().offset()
                        + ",\"leaderEpoch\":" + o.getValue().leaderEpoch().map(String::valueOf).orElse("null") + "}");
                }
            }
        }
    }
}
