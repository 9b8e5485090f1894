"""The filesystem layer and the remote mirror against a real S3-compatible server (s3proxy)."""

from __future__ import annotations

import os

import pytest

from pylogctl.errors import FileUnreadableError, UsageError
from pylogctl.storage import filesystems, remote_mirror
from pylogctl.storage.remote_records import RemoteFileRecords

pytestmark = pytest.mark.corpus


def test_urls_and_local_paths():
    assert filesystems.is_url("s3://b/p") and filesystems.is_url("hdfs://nn:8020/kafka")
    assert filesystems.is_url("gs://b/x") and filesystems.is_url("abfss://c@acct/x")
    assert not filesystems.is_url("/var/kafka-logs") and not filesystems.is_url("file:///x")
    assert filesystems.local_path("file:///var/kafka%20logs") == "/var/kafka logs"
    assert filesystems.local_path("relative/dir") == "relative/dir"
    with pytest.raises(UsageError):
        filesystems.local_path("file://otherhost/x")


def test_a_tree_of_log_dirs_is_listed_one_log_dir_a_request_with_its_sizes(
        s3_server, s3_corpus, corpus):
    url = s3_corpus["kraft3-cluster"]  # three brokers' log dirs
    s3_server.proxy.reset()
    files = filesystems.list_tree(url)
    assert s3_server.proxy.requests == {"GET": 1 + 3}  # the top level, then each log dir
    local = corpus / "kraft3-cluster"
    assert files == {p.relative_to(local).as_posix(): p.stat().st_size
                     for p in local.rglob("*") if p.is_file()}


def test_a_log_dir_is_listed_whole_after_its_top_level(s3_server, s3_corpus, corpus):
    url = filesystems.join(s3_corpus["kraft3-cluster"], "kafka1")
    s3_server.proxy.reset()
    files = filesystems.list_tree(url)
    assert s3_server.proxy.requests == {"GET": 2}  # not one per partition dir
    local = corpus / "kraft3-cluster" / "kafka1"
    assert files == {p.relative_to(local).as_posix(): p.stat().st_size
                     for p in local.rglob("*") if p.is_file()}


def test_ranged_and_whole_reads_return_the_files_bytes(s3_corpus, corpus):
    rel = "invoice-0/00000000000000000000.log"
    data = (corpus / "invoice-multiseg" / rel).read_bytes()
    url = filesystems.join(s3_corpus["invoice-multiseg"], rel)
    assert filesystems.read_range(url, 4096, 8192) == data[4096:4096 + 8192]
    assert filesystems.read_range(url, len(data) - 10, 100) == data[-10:]
    assert filesystems.read_whole(url) == data
    assert filesystems.size(url) == len(data)


def test_remote_records_hold_only_the_fetched_ranges_at_their_positions(s3_server, s3_corpus,
                                                                        corpus):
    rel = "invoice-1/00000000000000000000.log"
    data = (corpus / "invoice-multiseg" / rel).read_bytes()
    url = filesystems.join(s3_corpus["invoice-multiseg"], rel)
    s3_server.proxy.reset()
    with RemoteFileRecords(url, len(data)) as records:
        records.fetch(10_000, 20_000)
        assert bytes(records.view[10_000:20_000]) == data[10_000:20_000]
        assert not any(records.view[:10_000]) and not any(records.view[20_000:])
        assert records.bytes_fetched == 10_000
    assert s3_server.proxy.bytes_served < 10_000 + 4096  # the range and the replies' headers


@pytest.mark.parametrize("url, says", [
    ("s3://no-such-bucket/logs", "no such bucket"),
    ("s3://kafka-logs/no/such/prefix", "No such file or directory"),
])
def test_missing_buckets_and_prefixes_are_one_line_naming_the_url(s3_server, url, says):
    with pytest.raises(FileUnreadableError) as info:
        filesystems.list_tree(url)
    assert says in str(info.value) and url in str(info.value) and "\n" not in str(info.value)


def test_wrong_credentials_and_an_unreachable_endpoint_are_named(s3_server, s3_corpus,
                                                                 monkeypatch):
    monkeypatch.setattr(filesystems, "_fs_cache", {})
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    with pytest.raises(FileUnreadableError, match="the secret key does not match"):
        filesystems.list_tree(s3_corpus["xpx-2016"])
    monkeypatch.setattr(filesystems, "_fs_cache", {})
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # discard: nothing listens
    with pytest.raises(FileUnreadableError, match="cannot connect to the store's endpoint"):
        filesystems.list_tree(s3_corpus["xpx-2016"])


def test_the_endpoint_comes_from_the_aws_config_file_profile(tmp_path, monkeypatch):
    config = tmp_path / "config"
    config.write_text("[default]\nendpoint_url = http://a:1\n"
                      "[profile other]\nendpoint_url = http://b:2\n")
    for var in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    assert filesystems._s3_endpoint() == "http://a:1"
    monkeypatch.setenv("AWS_PROFILE", "other")
    assert filesystems._s3_endpoint() == "http://b:2"
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://c:3")
    assert filesystems._s3_endpoint() == "http://c:3"
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://d:4")
    assert filesystems._s3_endpoint() == "http://d:4"


def test_a_sparse_mirror_leaves_partition_files_in_the_store(s3_corpus, corpus):
    """The log dir's own files are fetched; a partition's files stay remote, its segments as
    sparse files of the right size, the files beside them not even written (a fleet's mirror
    costs a file per segment), and are read through when the planner needs one (an index)."""
    m = remote_mirror.mirror(s3_corpus["invoice-multiseg"], "sparse")
    local = corpus / "invoice-multiseg"
    assert len(m.placeholders) == len([r for r in m.files if "/" in r]) > 20
    for rel in m.files:
        mirrored = os.path.join(m.root, *rel.split("/"))
        original = (local / rel).read_bytes()
        if "/" in rel:
            if rel.endswith(".log"):
                assert os.path.getsize(mirrored) == len(original)
            else:
                assert not os.path.exists(mirrored) and remote_mirror.is_placeholder(mirrored)
            assert remote_mirror.read_through(mirrored) == original
        else:
            assert open(mirrored, "rb").read() == original
            assert remote_mirror.read_through(mirrored) is None
    assert m.url_of(os.path.join(m.root, "invoice-0")) == \
        s3_corpus["invoice-multiseg"] + "/invoice-0"


def test_partitions_of_several_log_dirs_and_topics_asked_whole_are_fetched(s3_corpus, corpus):
    """Where several brokers' log dirs hold a partition, the replica choice reads its
    checkpoints and log end: all but its earlier segments are fetched (every partition of
    this 3-broker cluster has one segment); ``__consumer_offsets`` is asked for whole."""
    m = remote_mirror.mirror(s3_corpus["kraft3-cluster"], "sparse",
                             frozenset({"__consumer_offsets"}))
    assert not m.placeholders
    for rel in m.files:
        mirrored = os.path.join(m.root, *rel.split("/"))
        assert open(mirrored, "rb").read() == (corpus / "kraft3-cluster" / rel).read_bytes()


def test_a_log_dir_named_like_a_partition_dir_keeps_its_own_files_in_a_sparse_mirror():
    files = {"kafka-logs-1/meta.properties": 60,
             "kafka-logs-1/recovery-point-offset-checkpoint": 20,
             "kafka-logs-1/orders-0/00000000000000000000.log": 100,
             "kafka-logs-1/orders-0/leader-epoch-checkpoint": 10}
    # a partition dir holds no folders: kafka-logs-1 is a log dir, its files are fetched
    assert remote_mirror._left_remote(files, frozenset()) == {
        "kafka-logs-1/orders-0/00000000000000000000.log",
        "kafka-logs-1/orders-0/leader-epoch-checkpoint"}
