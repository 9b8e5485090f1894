// kafkajs against `pylogctl broker` (tests/broker/test_broker_node.py): create the topic,
// produce N keyed records (idempotent), consume them all in a group, commit, and print what was
// consumed as JSON on stdout. Usage: node round_trip.js BOOTSTRAP TOPIC GROUP FIRST COUNT PARTITIONS
"use strict";
const { Kafka, Partitioners, logLevel } = require("kafkajs");

async function main() {
  const [bootstrap, topic, group, firstArg, countArg, partitionsArg] = process.argv.slice(2);
  const first = Number(firstArg), count = Number(countArg), partitions = Number(partitionsArg);
  const kafka = new Kafka({ clientId: "pylogctl-kafkajs", brokers: [bootstrap],
                            logLevel: logLevel.ERROR, retry: { retries: 5 } });

  const admin = kafka.admin();
  await admin.connect();
  // false when it exists already (the second session): fine either way.
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }],
                             waitForLeaders: true });
  await admin.disconnect();

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1,
                                    createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const messages = [];
  for (let i = first; i < first + count; i++) messages.push({ key: `key-${i}`, value: `value-${i}` });
  await producer.send({ topic, messages });
  await producer.disconnect();

  // disconnect() waits for the fetch in flight, which the broker rightly holds for up to
  // maxWaitTimeInMs when there is nothing new: keep that short so the test is quick.
  const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  const got = [];
  const next = {};  // partition -> offset after the last record consumed
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumed ${got.length} of ${count}`)), 30000);
    consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        got.push([message.key.toString(), message.value.toString()]);
        next[partition] = (BigInt(message.offset) + 1n).toString();
        if (got.length >= count) { clearTimeout(timer); resolve(); }
      },
    }).catch(reject);
  });
  await consumer.commitOffsets(Object.entries(next).map(
    ([partition, offset]) => ({ topic, partition: Number(partition), offset })));
  await consumer.disconnect();
  process.stdout.write(JSON.stringify({ records: got, committed: next }) + "\n");
}

main().catch((err) => { console.error(err); process.exit(1); });
