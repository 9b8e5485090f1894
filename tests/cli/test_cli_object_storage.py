"""Every reading command on a bucket URL prints what it prints on the local copy (paths print
as the URL they came from); writing commands refuse URLs; bad URLs are one line and exit 3."""

from __future__ import annotations

import pytest

from support import run_pylogctl

pytestmark = pytest.mark.corpus

# (corpus dir, arguments with {} where the dir goes)
READING = [
    ("donaldy-271", "dump-segment {}/__consumer_offsets-0/00000000000000000000.log "
                    "--print-data-log --offsets-decoder"),
    ("xpx-2016", "dump-segment {}"),  # a dir: every file in it
    ("invoice-multiseg", "dump-segment {}/invoice-0/00000000000000000000.index "
                         "{}/invoice-0/00000000000000000000.timeindex"),
    ("spooldir-cp512", "dump-segment --deep-iteration --files "
                       "{}/_schemas-0/00000000000000000000.log,"
                       "{}/docker-connect-status-0/00000000000000000000.log"),
    ("donaldy-271", "consumer-groups {} --list"),
    ("donaldy-271", "consumer-groups {} --describe --all-groups --offsets"),
    ("kraft3-cluster", "consumer-groups {} --describe --all-groups --members -o json"),
    ("kraft3-cluster", "get-offsets {}"),
    ("invoice-multiseg", "get-offsets {} --time -1"),
    ("ksql-kraft-2023", "transactions list {}"),
    ("kraft3-cluster", "replicas {} -o json"),
    ("stocksys-kraft", "metadata {} tree /image/topics"),
    ("ksql-kraft-2023", "metadata {} topics --describe"),
    ("airquality-kraft", "metadata {} check {}"),
    ("kraft3-cluster", "stats {}"),
    ("donaldy-271", "stats {} -o json"),
    ("invoice-multiseg", "scan {} --partition 1 --from-offset 1000 --to-offset 1010 -o json"),
    ("spooldir-cp512", "scan {} -o ndjson"),
    ("kraft3-cluster", "scan {} --topic __cluster_metadata --to-offset 40 -o table"),
]


def _normal(text: str) -> list[str]:
    """Lines with runs of blanks made one (a table's columns widen with a longer path)."""
    return [" ".join(line.split()) for line in text.splitlines()]


@pytest.mark.parametrize("name, args", READING,
                         ids=[f"{n}:{a.split(' {}')[0]}" for n, a in READING])
def test_a_reading_command_prints_the_same_on_the_bucket(cli, corpus, s3_corpus, name, args):
    url = s3_corpus[name]
    local = cli(*args.replace("{}", str(corpus / name)).split())
    remote = cli(*args.replace("{}", url).split())
    assert remote.code == local.code
    assert _normal(remote.out) == _normal(local.out.replace(str(corpus / name), url))
    assert _normal(remote.err) == _normal(local.err.replace(str(corpus / name), url))


@pytest.mark.parametrize("args", [
    "recover {}", "truncate {} --to-offset 0", "compact {}", "retention {}",
    "rebuild-index {} --execute", "move {} /tmp/elsewhere", "delete-records {}",
    "consumer-groups {} --reset-offsets --to-earliest --all-groups --all-topics --execute",
    "consumer-groups {} --delete --group g", "transactions abort {}",
    "replicas {} --elect 1 --execute", "broker --log-dir {}",
])
def test_writing_commands_refuse_urls(cli, args):
    url = "s3://kafka-logs/anything"
    done = cli(*args.replace("{}", url).split())
    assert done.code == 2
    command = args.split()[0]
    assert done.err.splitlines() == [
        f"pylogctl: {url}: {command} changes log dirs and needs their .lock, which an object "
        f"store has not: run it on a local copy"]


def test_file_urls_are_local_paths(cli, corpus):
    local = cli("get-offsets", str(corpus / "xpx-2016"))
    assert cli("get-offsets", f"file://{corpus / 'xpx-2016'}").out == local.out


def _one_line(done, code: int, *words: str) -> None:
    assert done.returncode == code, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and all(w in lines[0] for w in words), lines


def test_bad_urls_are_one_line_with_the_documented_exit_code(s3_server, s3_corpus,
                                                             monkeypatch):
    url = s3_corpus["xpx-2016"]
    _one_line(run_pylogctl("scan", "s3://no-such-bucket/logs", "--count"), 3,
              "s3://no-such-bucket/logs", "no such bucket")
    _one_line(run_pylogctl("get-offsets", url + "/missing"), 3, url + "/missing",
              "No such file or directory")
    _one_line(run_pylogctl("dump-segment", url + "/meta.properties.log"), 3)
    with monkeypatch.context() as env:
        env.delenv("AWS_ACCESS_KEY_ID")
        env.delenv("AWS_SECRET_ACCESS_KEY")
        _one_line(run_pylogctl("consumer-groups", url, "--list"), 3, url, "access denied")
    with monkeypatch.context() as env:
        env.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # discard: nothing listens
        _one_line(run_pylogctl("stats", url), 3, url, "cannot connect to the store's endpoint")


def test_a_url_to_an_object_that_is_not_a_kafka_file(s3_server, tmp_path):
    (tmp_path / "00000000000000000000.log").write_bytes(b"a shopping list, not a segment\n")
    url = s3_server.upload(tmp_path, "kafka-logs", "junk")
    done = run_pylogctl("dump-segment", url + "/00000000000000000000.log")
    _one_line(done, 1, url + "/00000000000000000000.log", "invalid bytes")


def test_a_command_fetches_the_segments_it_opens_not_the_fleets(s3_server, s3_corpus, corpus):
    """consumer-groups on a log dir without __consumer_offsets reads its checkpoints, not its
    16 MB of segments; get-offsets reads the last segment of each partition."""
    url = s3_corpus["invoice-multiseg"]
    logs = {p: p.stat().st_size for p in (corpus / "invoice-multiseg").rglob("*.log")}
    s3_server.proxy.reset()
    done = run_pylogctl("consumer-groups", url, "--list")
    assert done.returncode == 0, done.stderr
    assert s3_server.proxy.bytes_served < 0.01 * sum(logs.values())
    s3_server.proxy.reset()
    done = run_pylogctl("get-offsets", url)
    assert done.returncode == 0, done.stderr
    last = {}
    for path, size in logs.items():
        last[path.parent] = max(last.get(path.parent, (path, 0)), (path, size))
    assert s3_server.proxy.bytes_served < 1.2 * sum(size for _, size in last.values())


# Azure Blob Storage (Azurite) and GCS (fake-gcs-server): the same checks on a representative
# set of the reading commands, each emulator found through its store's standard variable
OTHER_STORES = [  # one small log dir (58 objects: uploads to an emulator are slow), with groups
    ("xpx-2016", "dump-segment {}/__consumer_offsets-40/00000000000000000000.log "
                 "--print-data-log --offsets-decoder"),
    ("xpx-2016", "consumer-groups {} --describe --all-groups --offsets"),
    ("xpx-2016", "dump-segment {}/TEST-TOPIC-0/00000000000000000000.log"),
    ("xpx-2016", "get-offsets {}"),
    ("xpx-2016", "scan {} --topic TEST-TOPIC --from-offset 20000 --to-offset 20005 -o json"),
    ("xpx-2016", "stats {}"),
]


@pytest.mark.parametrize("scheme", ["abfs", "gs"])
@pytest.mark.parametrize("name, args", OTHER_STORES,
                         ids=["dump-offsets", "groups", "dump-log", "get-offsets", "scan",
                              "stats"])
def test_a_reading_command_prints_the_same_on_azure_and_gcs(cli, corpus, store_corpus, scheme,
                                                           name, args):
    url = store_corpus[scheme, name]
    local = cli(*args.replace("{}", str(corpus / name)).split())
    remote = cli(*args.replace("{}", url).split())
    assert remote.code == local.code
    assert _normal(remote.out) == _normal(local.out.replace(str(corpus / name), url))
    assert _normal(remote.err) == _normal(local.err.replace(str(corpus / name), url))


@pytest.mark.parametrize("scheme, missing", [("abfs", "no such container"),
                                             ("gs", "no such bucket")])
def test_a_missing_container_or_bucket_is_one_line(store_corpus, scheme, missing):
    store_corpus[scheme, "xpx-2016"]  # the emulator running, its variable set
    url = f"{scheme}://no-such-bucket/xpx-2016"
    _one_line(run_pylogctl("scan", url, "--count"), 3, url, missing)


def test_hdfs_without_libhdfs_is_one_line_naming_what_it_needs():
    # no Debian package nor registry here ships Hadoop's libhdfs (the JNI client pyarrow loads)
    # or a NameNode to run: HDFS URLs are read as pyarrow reads them, untested beyond this
    url = "hdfs://127.0.0.1:9/kafka-logs"
    _one_line(run_pylogctl("get-offsets", url), 3, url, "HDFS needs", "libhdfs")


def test_abfs_urls_in_hadoop_s_form_name_the_account(cli, store_corpus, monkeypatch):
    url = store_corpus["abfs", "xpx-2016"]  # abfs://kafka-logs/xpx-2016: the account from the env
    hadoop = url.replace("abfs://kafka-logs/",
                         "abfss://kafka-logs@devstoreaccount1.dfs.core.windows.net/")
    assert cli("get-offsets", hadoop).out == cli("get-offsets", url).out
    with monkeypatch.context() as env:
        env.delenv("AZURE_STORAGE_CONNECTION_STRING")
        env.delenv("AZURE_STORAGE_ACCOUNT", raising=False)
        _one_line(run_pylogctl("get-offsets", url), 2, url, "name the storage account")
