"""``HashMap`` iteration order, checked against a real JVM: the order in which Kafka's
``--reset-offsets`` prints its plan; and ``TimelineHashMap``'s, checked against Kafka's own
class: the order in which its describe responses list group members."""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from pylogctl.groups.java_hash_map import (capacity_for, group_order, partition_order,
                                          timeline_order)
from pylogctl.groups.partitioner import java_string_hash
from pylogctl.groups.offset_commits import TopicPartition

JAVA = r"""
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
public class Order {
    // org.apache.kafka.common.TopicPartition's hashCode, on the same fields
    record TP(String topic, int partition) {
        @Override public int hashCode() { return 31 * (31 + partition) + Objects.hashCode(topic); }
    }
    static String unhex(String h) {
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        return new String(b, StandardCharsets.UTF_8);
    }
    public static void main(String[] args) throws IOException {
        // one case per line: keys "g:HEX" (a String) or "t:HEX:P" (a TopicPartition)
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            Map<Object, String> map = new HashMap<>();
            for (String key : line.trim().split(" ")) {
                String[] f = key.split(":");
                map.put(f[0].equals("g") ? unhex(f[1]) : new TP(unhex(f[1]), Integer.parseInt(f[2])), key);
            }
            System.out.println(String.join(" ", map.values()));
        }
    }
}
"""


def _group_key(g: str) -> str:
    return "g:" + g.encode("utf-8", "surrogatepass").hex()


def _tp_key(tp: TopicPartition) -> str:
    return f"t:{tp.topic.encode().hex()}:{tp.partition}"


@pytest.fixture(scope="module")
def java(tmp_path_factory):
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("no JDK (javac, java) on this machine: the JVM oracle cannot run")
    root = tmp_path_factory.mktemp("java")
    (root / "Order.java").write_text(JAVA)
    subprocess.run(["javac", "Order.java"], cwd=root, check=True, capture_output=True)

    def order(cases: list[list[str]]) -> list[list[str]]:
        """Each case's keys in the order a HashMap filled with them iterates."""
        out = subprocess.run(["java", "-cp", str(root), "Order"], check=True,
                             input="".join(" ".join(c) + "\n" for c in cases),
                             capture_output=True, text=True).stdout
        return [line.split(" ") for line in out.splitlines()]
    return order


def test_capacity_grows_past_three_quarters():
    assert [capacity_for(n) for n in (0, 12, 13, 24, 25, 100)] == [16, 16, 32, 32, 64, 256]


def test_partitions_of_one_small_topic_come_out_descending():
    # t's hash puts partition p in bucket (1077 - p) & 15: Kafka's familiar reversed tables
    assert [tp.partition for tp in partition_order(TopicPartition("t", p) for p in range(6))] \
        == [5, 4, 3, 2, 1, 0]


def test_the_order_is_the_jvms(java):
    rng = random.Random(20261121)
    letters = "abcxyz-_.é\u4e2d"
    cases, expected = [], []
    for _ in range(300):
        topics = list({"".join(rng.choices(letters, k=rng.randint(1, 12)))
                       for _ in range(rng.randint(1, 4))})
        tps = [TopicPartition(t, p) for t in topics for p in range(rng.randint(1, 40))]
        rng.shuffle(tps)
        cases.append([_tp_key(tp) for tp in tps])
        expected.append([_tp_key(tp) for tp in partition_order(tps)])
        groups = list({"".join(rng.choices(letters + "AZ09 ,'\U0001f600", k=rng.randint(1, 20)))
                       for _ in range(rng.randint(1, 30))})
        cases.append([_group_key(g) for g in groups])
        expected.append([_group_key(g) for g in group_order(groups)])
    assert java(cases) == expected


def test_timeline_order_of_two_streams_members_is_kafkas():
    # the two members of a Kafka 4.4 streams group, as kafka-streams-groups.sh listed them:
    # 4 slots (the second put of two members grows the table), slots 2 and 3
    members = ["_k9vYaJiRtunyckmtDMdGg", "_URJmS0ZSZGo8i0CowM8ug"]
    assert timeline_order(members, java_string_hash) == members[::-1]


def test_timeline_order_is_kafkas_timeline_hash_map():
    from kafka_jvm import KAFKA_DIR, java_command, require_kafka

    require_kafka()
    rng = random.Random(20261127)
    letters = "abcxyzAZ09-_é\u4e2d"
    cases = [[f"{''.join(rng.choices(letters, k=rng.randint(1, 24)))}-{i}"
              for i in range(rng.randint(1, 40))] for _ in range(300)]
    out = subprocess.run(java_command(str(KAFKA_DIR / "clients" / "TimelineOrder.java"), []),
                         input="".join(" ".join(k.encode().hex() for k in c) + "\n"
                                       for c in cases),
                         capture_output=True, text=True, check=True).stdout
    kafka = [[bytes.fromhex(h).decode() for h in line.split(" ")] for line in out.splitlines()]
    assert [timeline_order(c, java_string_hash) for c in cases] == kafka
