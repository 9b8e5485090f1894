// One round of traffic on a log dir that moves between pylogctl's broker and the real one,
// with Kafka's Java client: the topic "switched" (3 partitions, its own retention.ms) is
// created in round 1; each round an idempotent producer (acks=all, a codec per round) sends
// 30 keyed records, the transactional id "switch-txn" (the same every round, so its producer
// id and epoch travel with the dir) commits 5 records and aborts 3, and two consumer groups
// (read_committed) consume everything new and commit: "switch-group" with the classic protocol,
// "switch-modern" with the KIP-848 consumer protocol.
// Run as a single source file on the Kafka jars:
//   java -cp 'tests/apache_kafka/lib/4.4.0/*' SwitchTraffic.java BOOTSTRAP ROUND
// One JSON line:
//   {"round":R,"sent":[KEY,...],"consumed":[[PARTITION,OFFSET,KEY],...],
//    "committed":{"P":O,...},"consumedModern":[...],"committedModern":{...},
//    "retention":MS,"producerId":ID,"producerEpoch":E}
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class SwitchTraffic {
    static final String TOPIC = "switched";
    static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};

    static String str(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** The group reads everything new (read_committed) and commits; appends "consumed" and
     *  "committed" (with {@code suffix}) to {@code out}. */
    static void consume(StringBuilder out, Properties base, String group, String protocol, String suffix)
            throws Exception {
        Properties c = new Properties();
        c.putAll(base);
        c.put("group.id", group);
        c.put("group.protocol", protocol);
        c.put("isolation.level", "read_committed");
        c.put("auto.offset.reset", "earliest");
        c.put("enable.auto.commit", "false");
        List<TopicPartition> partitions = new ArrayList<>();
        for (int i = 0; i < 3; i++) partitions.add(new TopicPartition(TOPIC, i));
        out.append(",\"consumed").append(suffix).append("\":[");
        Map<String, Long> committed = new TreeMap<>();
        try (KafkaConsumer<String, String> consumer =
                     new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(TOPIC));
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long deadline = System.currentTimeMillis() + 60_000;
            boolean first = true;
            while (true) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    out.append(first ? "" : ",").append("[").append(r.partition()).append(",")
                       .append(r.offset()).append(",").append(str(r.key())).append("]");
                    first = false;
                }
                Set<TopicPartition> assigned = consumer.assignment();
                if (assigned.size() == 3 && assigned.stream().allMatch(tp -> consumer.position(tp) >= end.get(tp))) break;
                if (System.currentTimeMillis() > deadline) throw new IllegalStateException("never reached " + end);
            }
            consumer.commitSync();
            for (TopicPartition tp : partitions) committed.put(String.valueOf(tp.partition()), consumer.position(tp));
        }
        out.append("],\"committed").append(suffix).append("\":{");
        boolean first = true;
        for (Map.Entry<String, Long> e : committed.entrySet()) {
            out.append(first ? "" : ",").append(str(e.getKey())).append(":").append(e.getValue());
            first = false;
        }
        out.append("}");
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        int round = Integer.parseInt(args[1]);
        Properties base = new Properties();
        base.put("bootstrap.servers", bootstrap);
        StringBuilder out = new StringBuilder("{\"round\":" + round);
        try (Admin admin = Admin.create(base)) {
            if (round == 1) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 3, (short) 1)
                        .configs(Map.of("retention.ms", "604800001")))).all().get();
            }
            List<String> sent = new ArrayList<>();
            Properties p = new Properties();
            p.putAll(base);
            p.put("acks", "all");
            p.put("enable.idempotence", "true");
            p.put("compression.type", CODECS[round % CODECS.length]);
            p.put("linger.ms", "5");
            try (KafkaProducer<String, String> producer =
                         new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
                for (int i = 0; i < 30; i++) {
                    String key = "r" + round + "-" + i;
                    producer.send(new ProducerRecord<>(TOPIC, i % 3, key, "value " + key));
                    sent.add(key);
                }
                producer.flush();
            }
            Properties t = new Properties();
            t.putAll(p);
            t.put("transactional.id", "switch-txn");
            try (KafkaProducer<String, String> producer =
                         new KafkaProducer<>(t, new StringSerializer(), new StringSerializer())) {
                producer.initTransactions();
                producer.beginTransaction();
                for (int i = 0; i < 5; i++) {
                    String key = "r" + round + "-txn-" + i;
                    producer.send(new ProducerRecord<>(TOPIC, i % 3, key, "committed " + key));
                    sent.add(key);
                }
                producer.commitTransaction();
                producer.beginTransaction();
                for (int i = 0; i < 3; i++) {
                    producer.send(new ProducerRecord<>(TOPIC, i % 3, "r" + round + "-aborted-" + i, "aborted"));
                }
                producer.flush();
                producer.abortTransaction();
            }
            out.append(",\"sent\":[");
            for (int i = 0; i < sent.size(); i++) out.append(i == 0 ? "" : ",").append(str(sent.get(i)));
            out.append("]");

            consume(out, base, "switch-group", "classic", "");
            consume(out, base, "switch-modern", "consumer", "Modern");
            ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, TOPIC);
            String retention = admin.describeConfigs(List.of(topic)).all().get().get(topic)
                                    .get("retention.ms").value();
            out.append(",\"retention\":").append(retention);
            TransactionDescription txn = admin.describeTransactions(List.of("switch-txn"))
                                              .all().get().get("switch-txn");
            out.append(",\"producerId\":").append(txn.producerId())
               .append(",\"producerEpoch\":").append(txn.producerEpoch()).append("}");
        }
        System.out.println(out);
    }
}
