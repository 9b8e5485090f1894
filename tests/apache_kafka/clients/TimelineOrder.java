// The order in which Kafka's own TimelineHashMap (kafka-server-common), the map the group
// coordinator keeps members in, iterates its keys: the oracle for pylogctl's timeline_order.
// Run as a single source file on the Kafka jars:
//   java -cp 'tests/apache_kafka/lib/4.4.0/*' TimelineOrder.java < cases
// Each stdin line is one case: hex-encoded UTF-8 keys in insertion order. Every key is put
// twice, as a member's metadata and assignment records put it on load; the keys are printed
// back in iteration order.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.timeline.SnapshotRegistry;
import org.apache.kafka.timeline.TimelineHashMap;

public class TimelineOrder {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            TimelineHashMap<String, String> map = new TimelineHashMap<>(new SnapshotRegistry(new LogContext()), 0);
            List<String> keys = new ArrayList<>();
            for (String hex : line.trim().split(" ")) {
                keys.add(new String(HexFormat.of().parseHex(hex), StandardCharsets.UTF_8));
            }
            for (String key : keys) map.put(key, key);
            for (String key : keys) map.put(key, key);
            List<String> out = new ArrayList<>();
            for (String key : map.keySet()) {
                out.add(HexFormat.of().formatHex(key.getBytes(StandardCharsets.UTF_8)));
            }
            System.out.println(String.join(" ", out));
        }
    }
}
