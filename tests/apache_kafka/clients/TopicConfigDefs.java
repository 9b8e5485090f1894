// Kafka's own topic config definitions (kafka-storage's LogConfig, kafka-server-common's
// ServerTopicConfigSynonyms): the oracle for pylogctl/storage/topic_config_def.py.
// Run as a single source file on the Kafka jars:
//   java -cp 'tests/apache_kafka/lib/4.4.0/*' TopicConfigDefs.java < probes
// Prints one line per non-internal topic config, in definition order:
//   key NAME TYPE DEFAULT   (the default as kafka-configs prints it)
// then one per synonym list:  synonyms NAME BROKER-NAME:UNIT ...   (UNIT: 1, minutes, hours)
// then, for each stdin line "NAME<TAB>VALUE", LogConfig.validate's verdict:  OK or the message.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.server.config.ConfigSynonym;
import org.apache.kafka.server.config.ServerTopicConfigSynonyms;
import org.apache.kafka.storage.internals.log.LogConfig;

public class TopicConfigDefs {
    public static void main(String[] args) throws Exception {
        for (Map.Entry<String, ConfigDef.ConfigKey> e : LogConfig.configKeys().entrySet()) {
            ConfigDef.ConfigKey key = e.getValue();
            if (key.internalConfig) continue;
            String value = key.hasDefault() ? ConfigDef.convertToString(key.defaultValue, key.type) : "<none>";
            System.out.println("key\t" + key.name + "\t" + key.type + "\t" + value);
        }
        for (Map.Entry<String, List<ConfigSynonym>> e : ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS.entrySet()) {
            StringBuilder line = new StringBuilder("synonyms\t" + e.getKey());
            for (ConfigSynonym s : e.getValue()) {
                String unit = s.converter() == ConfigSynonym.HOURS_TO_MILLISECONDS ? "hours"
                    : s.converter() == ConfigSynonym.MINUTES_TO_MILLISECONDS ? "minutes" : "1";
                line.append("\t").append(s.name()).append(":").append(unit);
            }
            System.out.println(line);
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split("\t", -1);
            try {
                LogConfig.validate(Map.of(f[0], f[1]));
                System.out.println("OK");
            } catch (Exception e) {
                System.out.println(e.getMessage());
            }
        }
    }
}
