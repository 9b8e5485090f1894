"""Errors say the first thing that is wrong, for every subcommand that takes paths: a path that
does not exist is exit 3 before any option check or name parsing; a folder that is none of
Kafka's says what was expected and what it holds instead (exit 2)."""

from __future__ import annotations

import os

import pytest

# every subcommand that reads paths, as a user would type it; P stands for the path
# (broker --log-dir and sample create their dir: they take no existing path)
ANY = "a partition dir, a log dir nor a dir holding log dirs"
LOG_DIRS = "a log dir nor a dir holding log dirs"
COMMANDS = [
    (("compact", "P"), ANY),
    (("config", "P"), ANY),
    (("consumer-groups", "--list", "P"), LOG_DIRS),
    (("delete-records", "--topic", "t", "--partition", "0", "--offset", "1", "P"), LOG_DIRS),
    (("dump-segment", "P"), ANY),
    (("get-offsets", "--topic", "t", "P"), LOG_DIRS),
    (("rebuild-index", "P"), ANY),
    (("recover", "P"), ANY),
    (("replicas", "P"), LOG_DIRS),
    (("retention", "P"), ANY),
    (("scan", "P"), ANY),
    (("share-groups", "--list", "P"), LOG_DIRS),
    (("stats", "P"), ANY),
    (("streams-groups", "--list", "P"), LOG_DIRS),
    (("transactions", "list", "P"), LOG_DIRS),
]
IDS = [" ".join(a for a in args if a != "P") for args, _ in COMMANDS]


def _args(args: tuple[str, ...], path: object) -> list[object]:
    return [path if a == "P" else a for a in args]


def _first_line(result) -> tuple[int, str]:
    return result.code, result.err.splitlines()[0]


MISSING_FIRST = COMMANDS + [
    # before the options are checked or a name is parsed
    (("consumer-groups", "P"), None),
    (("truncate", "P"), None),
    (("truncate", "--to-offset", "0", "P"), None),
    (("metadata", "P", "topics"), None),
    (("move", "t-0", "--from", "P", "--to", "P"), None),
]


@pytest.mark.parametrize("args", [a for a, _ in MISSING_FIRST],
                         ids=[" ".join(a) for a, _ in MISSING_FIRST])
@pytest.mark.parametrize("name", ["nonexistent", "nope.log"])
def test_a_missing_path_is_exit_3_before_anything_else(cli, tmp_path, args, name):
    missing = tmp_path / name
    assert _first_line(cli(*_args(args, missing))) == (
        3, f"pylogctl: No such file or directory: {missing}")


@pytest.mark.parametrize("args,expected", COMMANDS, ids=IDS)
def test_a_folder_of_something_else_says_what_was_expected_and_found(cli, tmp_path, args,
                                                                       expected):
    junk = tmp_path / "notes"
    junk.mkdir()
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        (junk / name).write_text("x")
    (junk / "sub").mkdir()
    assert _first_line(cli(*_args(args, junk))) == (
        2, f"pylogctl: {junk} is neither {expected}: no meta.properties or offset checkpoint, "
        f"no {{topic}}-{{partition}} dirs with segments, no segment files "
        f"(found a.txt, b.txt, c.txt and 2 more)")


@pytest.mark.parametrize("args,expected", COMMANDS, ids=IDS)
def test_an_empty_folder_is_said_to_be_empty(cli, tmp_path, args, expected):
    empty = tmp_path / "empty"
    empty.mkdir()
    code, line = _first_line(cli(*_args(args, empty)))
    assert code == 2 and line.startswith(f"pylogctl: {empty} is neither {expected}: ")
    assert line.endswith("no segment files (it is empty)")


@pytest.fixture
def misnamed(tmp_path):
    """Segment files in a dir whose name is not {topic}-{partition}."""
    d = tmp_path / "segments"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(b"")
    return d


@pytest.mark.parametrize("args,expected", [c for c in COMMANDS if c[1] == ANY]
                         + [(("truncate", "--to-offset", "0", "P"), ANY)],
                         ids=[i for i, c in zip(IDS, COMMANDS) if c[1] == ANY] + ["truncate"])
def test_a_misnamed_partition_dir_is_named_as_such(cli, misnamed, args, expected):
    if args[0] in ("dump-segment", "rebuild-index"):
        pytest.skip("reads the files by their own names: no log dir needed")
    assert _first_line(cli(*_args(args, misnamed))) == (
        2, f"pylogctl: {misnamed} holds a partition's files but is not named as a partition "
        f"dir ({{topic}}-{{partition}})")


@pytest.mark.parametrize("args,expected", [c for c in COMMANDS if c[1] == LOG_DIRS],
                         ids=[i for i, c in zip(IDS, COMMANDS) if c[1] == LOG_DIRS])
def test_a_partition_dir_where_a_log_dir_is_wanted_names_its_log_dir(cli, misnamed, args,
                                                                     expected):
    assert _first_line(cli(*_args(args, misnamed))) == (
        2, f"pylogctl: {misnamed} is a partition dir, not a log dir: give its log dir "
        f"({misnamed.parent})")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
@pytest.mark.parametrize("args,expected", COMMANDS[:3], ids=IDS[:3])
def test_an_unreadable_dir_is_exit_3(cli, tmp_path, args, expected):
    closed = tmp_path / "closed"
    closed.mkdir(mode=0)
    try:
        assert _first_line(cli(*_args(args, closed))) == (
            3, f"pylogctl: Permission denied: {closed}")
    finally:
        closed.chmod(0o755)
