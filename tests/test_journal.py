"""The commit journal's file format and its bound on pending working-tree paths (storage.journal)."""
from __future__ import annotations

import os

from storage.journal import SLOT_SIZE, Journal, Slot, pending_after


def _journal_with(tmp_path, *slots: Slot) -> Journal:
    journal = Journal(tmp_path)
    fd = journal.open(lambda fd: None, lambda path: None)
    try:
        for slot in slots:
            Journal.write(fd, slot)
    finally:
        os.close(fd)
    return journal


def test_the_latest_slot_and_the_one_before_are_read_back(tmp_path):
    journal = _journal_with(tmp_path, Slot(1, None, "a" * 40), Slot(2, "a" * 40, "b" * 40, paths={"x": 2}))
    latest, previous = journal.read()
    assert (latest.seq, latest.head, latest.paths) == (2, "b" * 40, {"x": 2})
    assert (previous.seq, previous.head) == (1, "a" * 40)


def test_a_torn_slot_fails_its_checksum_and_the_other_is_the_latest(tmp_path):
    journal = _journal_with(tmp_path, Slot(7, None, "a" * 40), Slot(8, "a" * 40, "b" * 40))
    with open(journal.path, "r+b") as handle:
        handle.seek(0 * SLOT_SIZE + 30)  # slot 8 lives at offset 0
        handle.write(b"X")
    latest, previous = journal.read()
    assert latest.seq == 7 and previous is None


def test_a_shorter_slot_written_over_a_longer_one_ignores_the_old_bytes_after_it(tmp_path):
    long_paths = {f"locales/fr/{n:04d}.json": 3 for n in range(50)}
    journal = _journal_with(tmp_path, Slot(2, None, "a" * 40, paths=long_paths), Slot(3, "a" * 40, "b" * 40),
                            Slot(4, "b" * 40, "c" * 40))
    latest, previous = journal.read()
    assert (latest.seq, latest.paths, previous.seq) == (4, {}, 3)


def test_a_missing_journal_reads_as_no_slot(tmp_path):
    assert Journal(tmp_path).read() == (None, None)


def test_pending_paths_stay_within_the_limit_by_flushing_the_oldest_first():
    latest = Slot(5, None, "a" * 40, paths={"old": 1, "mid": 3, "new": 5})
    pending, flush = pending_after(latest, 6, ["fresh"], [], limit=3)
    assert flush == ["old"]
    assert pending == {"mid": 3, "new": 5, "fresh": 6}


def test_a_path_written_again_stays_pending_with_its_latest_slot_and_flushes_nothing():
    latest = Slot(5, None, "a" * 40, paths={"a": 1, "b": 4})
    pending, flush = pending_after(latest, 6, ["a"], ["locales/pt"], limit=3)
    assert flush == []
    assert pending == {"a": 6, "b": 4, "locales/pt/": 6}


def test_a_write_of_more_paths_than_the_limit_flushes_every_older_one_and_lists_none():
    latest = Slot(5, None, "a" * 40, paths={"a": 1, "b": 4})
    pending, flush = pending_after(latest, 6, ["c", "d", "e", "b"], [], limit=3)
    assert pending is None
    assert flush == ["a"]  # "b" is written again by this commit, which flushes its own files itself


def test_the_longest_allowed_paths_fit_in_a_slot():
    from limits import MAX_PATH_BYTES
    from storage.git.refs import PENDING_PATHS

    paths = {"é" * (MAX_PATH_BYTES // 2 - 4) + f"{n:04d}": 10 ** 9 for n in range(PENDING_PATHS)}
    slot = Slot(10 ** 9, "a" * 40, "b" * 40, packs=[["tmp_pack_1_2", "tmp_idx_1_2", "pack-" + "c" * 40]],
                paths=paths)
    assert slot.encode() is not None
