// A Kafka Streams application in a streams group (KIP-1071, group.protocol=streams), so that
// the broker writes the streams-group records of __consumer_offsets the offline tools read.
// Run as a single source file on the Kafka jars (no build step):
//   java -cp 'tests/apache_kafka/lib/4.4.0/*' StreamsGroupApp.java BOOTSTRAP APP_ID IN OUT SECONDS [THREADS]
// It copies IN to OUT through a repartition (so the group has an internal topic and two
// subtopologies), runs for SECONDS or until its stdin closes, and exits. Each stream thread
// (THREADS, default 1) is a member of the group.
import java.io.InputStream;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;

public class StreamsGroupApp {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.STATE_DIR_CONFIG, System.getProperty("java.io.tmpdir") + "/streams-" + args[1]);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, args.length > 5 ? Integer.parseInt(args[5]) : 1);
        props.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(args[2], Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
            .repartition(Repartitioned.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("rekey"))
            .to(args[3], Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        CountDownLatch running = new CountDownLatch(1);
        try (KafkaStreams streams = new KafkaStreams(builder.build(), props)) {
            streams.setStateListener((now, before) -> {
                if (now == KafkaStreams.State.RUNNING) System.out.println("RUNNING");
            });
            streams.start();
            Thread stdin = new Thread(() -> {
                try (InputStream in = System.in) { while (in.read() >= 0) { } } catch (Exception e) { }
                running.countDown();
            });
            stdin.setDaemon(true);
            stdin.start();
            running.await(Long.parseLong(args[4]), TimeUnit.SECONDS);
            streams.close(Duration.ofSeconds(10));
        }
    }
}
