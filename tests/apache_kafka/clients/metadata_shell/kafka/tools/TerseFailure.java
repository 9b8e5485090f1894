package kafka.tools;

/** Where kafka-shell 4.3's main expects Kafka's TerseFailure (moved in 4.4). */
public class TerseFailure extends org.apache.kafka.common.KafkaException {
    public TerseFailure(String message) {
        super(message);
    }

    public TerseFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
