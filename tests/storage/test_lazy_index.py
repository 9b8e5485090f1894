"""LazyIndex: nothing is created or mapped until the index is used."""

from __future__ import annotations

from pylogctl.storage.lazy_index import LazyIndex


def test_index_file_appears_on_first_use_only(tmp_path):
    path = tmp_path / f"{5:020d}.index"
    lazy = LazyIndex.for_offset(path, 5, 800)
    lazy.close()
    assert not lazy.is_loaded and not path.exists() and not lazy.delete_if_exists()
    lazy.rename_to(tmp_path / "moved.index")  # a missing file is renamed in name only
    assert lazy.path == str(tmp_path / "moved.index")
    index = lazy.get()
    assert lazy.is_loaded and index is lazy.get() and index.max_entries == 100
    index.append(6, 0)
    lazy.rename_to(path)
    assert lazy.path == str(path)
    lazy.close()
    assert path.stat().st_size == 8


def test_unloaded_index_is_renamed_and_deleted_on_disk(tmp_path):
    path = tmp_path / f"{0:020d}.timeindex"
    path.write_bytes(b"\0" * 12)
    lazy = LazyIndex.for_time(path, 0, 1200)
    lazy.rename_to(tmp_path / (path.name + ".deleted"))
    assert (tmp_path / (path.name + ".deleted")).exists() and not lazy.is_loaded
    assert lazy.delete_if_exists() and list(tmp_path.iterdir()) == []
