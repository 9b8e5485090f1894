package org.apache.kafka.common.utils;

/** Where kafka-shell 4.3's /local node expects Kafka's AppInfoParser (moved in 4.4). */
public class AppInfoParser {
    public static String getVersion() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getVersion();
    }

    public static String getCommitId() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getCommitId();
    }
}
