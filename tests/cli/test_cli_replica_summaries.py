"""Reading several brokers' log dirs, ``scan`` and ``consumer-groups`` say in one stderr line
which replicas they read (how many partitions, from which log dirs, how many ties) instead
of a line per partition; ``-v``/``--verbose`` lists them."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.corpus


@pytest.fixture
def kraft3(corpus):
    return corpus / "kraft3-cluster"


def _choices(err: str) -> list[str]:
    return [line for line in err.splitlines() if re.match(r"pylogctl: \S+-\d+: read ", line)]


def _summaries(err: str) -> list[str]:
    return [line for line in err.splitlines() if "with replicas in several log dirs" in line]


def test_scan_says_in_one_line_which_replicas_it_read(cli, kraft3):
    r = cli("scan", kraft3, "--count")
    assert r.code == 0, r.err
    d = {n: kraft3 / n for n in ("kafka1", "kafka2", "kafka3")}
    assert _summaries(r.err) == [
        f"pylogctl: 11 partitions with replicas in several log dirs, each read from the replica "
        f"with the highest leader epoch, then log end: {d['kafka1']}: 5, {d['kafka2']}: 2, "
        f"{d['kafka3']}: 4; 1 tie (the first log dir given) (scan -v lists them; "
        f"--all-replicas reads every copy)"]
    assert len(r.err.splitlines()) == 2
    listed = cli("scan", kraft3, "--count", "-v").err.splitlines()
    assert len(listed) == 2 + 11 and len(_choices("\n".join(listed))) == 11
    assert f"pylogctl: test1-4: read {d['kafka1']}: leader epoch 0, log end 1 (identical epochs " \
           f"and log ends: the first log dir given); not {d['kafka2']}: leader epoch 0, log end " \
           f"1; {d['kafka3']}: leader epoch 0, log end 1" in listed


def test_consumer_groups_say_in_one_line_which_replicas_they_read(cli, kraft3):
    r = cli("consumer-groups", kraft3, "--describe", "--all-groups")
    assert r.code == 0, r.err
    d = {n: f"{kraft3 / n} (broker {n[-1]})" for n in ("kafka1", "kafka2", "kafka3")}
    assert _summaries(r.err) == [
        f"pylogctl: 5 partitions with replicas in several log dirs, each read from the replica "
        f"with the highest leader epoch, then log end: {d['kafka1']}: 3, {d['kafka2']}: 1, "
        f"{d['kafka3']}: 1; 1 tie (the first log dir given) (--verbose lists them)"]
    assert not _choices(r.err)
    listed = cli("consumer-groups", kraft3, "--describe", "--all-groups", "--verbose").err
    assert len(_choices(listed)) == 5
    assert not _summaries(listed)
