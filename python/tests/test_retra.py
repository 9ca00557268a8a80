# The Python module against the CLI and against itself: probes equal `retra probe --json` on
# sampled positions of every game, batches and the numpy path equal single probes, errors are
# typed exceptions with the library's messages, build and verify report progress.
import random
import threading

import pytest

import retra
from conftest import cli_probe

STARTS = {
    "awari": ["1,1,1,1,1,2,1,0,0,0,0,0", "2,1,0,1,1,2,1,0,0,0,0,0", "0,0,0,0,0,3,2,1,0,0,0,2"],
    "xiangqi": ["3k5/9/9/9/9/9/9/9/4R4/4K4 w", "3k1g3/9/9/9/9/9/9/4R4/9/4K4 w",
                "4k4/4g4/9/9/9/9/9/9/9/R3K4 b"],
    "chess": ["8/8/8/4k3/8/8/8/4K2R w - - 0 1", "8/8/8/8/3k4/8/1R6/4K3 b - - 0 1"],
}


def sample_positions(db, game, count, seed):
    """Positions reached by random walks from the starts, following each move's child."""
    rng = random.Random(seed)
    seen = []
    for start in STARTS[game]:
        position = start
        for _ in range(count):
            seen.append(position)
            moves = db.probe(position).moves
            if not moves:
                break
            position = rng.choice(moves)["child"]
    return seen


@pytest.mark.parametrize("game", ["awari", "xiangqi", "chess"])
def test_probe_equals_the_cli(dbs, retra_binary, game):
    db = retra.open(dbs[game])
    assert db.game == game
    positions = sample_positions(db, game, 8, seed=20261127)
    assert len(positions) >= 10
    for p in positions:
        r = db.probe(p)
        assert r.json == cli_probe(retra_binary, dbs[game], p), p
        assert r.json["ok"] is True


@pytest.mark.parametrize("game", ["awari", "xiangqi"])
def test_probe_many_equals_single_probes(dbs, game):
    db = retra.open(dbs[game])
    positions = sample_positions(db, game, 20, seed=5)
    assert db.probe_many(positions) == [db.probe(p).value for p in positions]


def test_probe_many_reports_the_failing_position(dbs):
    db = retra.open(dbs["awari"])
    with pytest.raises(retra.InvalidArgumentError, match="position 1"):
        db.probe_many(["1,0,0,0,0,0,0,0,0,0,0,0", "nonsense"])
    assert db.probe_many(["1,0,0,0,0,0,0,0,0,0,0,0", "nonsense"], strict=False)[1] is None


def test_numpy_stored_bytes_by_index(dbs):
    np = pytest.importorskip("numpy")
    db = retra.open(dbs["awari"])
    entries = {s["name"]: s["entries"] for s in db.info()["segments"]}
    idx = np.arange(entries["8"], dtype=np.uint64)
    values = db.stored("8", idx)
    assert values.dtype == np.uint8 and values.shape == (entries["8"],)
    # The bytes agree with the one-at-a-time path, and the histogram with the manifest's stats.
    assert list(db.stored("8", idx[:50])) == list(values[:50])
    stats = next(s for s in db.stats()["segments"] if s["stones"] == 8)
    assert sum(stats["histogram"].values()) == entries["8"]
    with pytest.raises(retra.InvalidArgumentError, match="outside segment"):
        db.stored("8", np.array([entries["8"]], dtype=np.uint64))
    with pytest.raises(retra.NotFoundError):
        db.stored("99", idx[:1])


def test_errors_are_typed_and_carry_the_message(dbs, tmp_path):
    db = retra.open(dbs["awari"])
    with pytest.raises(retra.InvalidArgumentError, match="12 needed"):
        db.probe("1,2")
    with pytest.raises(ValueError):  # InvalidArgumentError is also a ValueError
        db.probe("\xff\xfe")
    with pytest.raises(retra.NotFoundError, match="has no awari segment '18'"):
        db.probe("9,9,0,0,0,0,0,0,0,0,0,0")
    with pytest.raises(retra.NotFoundError, match="does not exist"):
        retra.open(tmp_path / "missing")
    with pytest.raises(retra.InvalidArgumentError, match="unknown game"):
        retra.build("go", tmp_path / "x")
    with pytest.raises(retra.InvalidArgumentError, match="no option 'colour'"):
        retra.build("awari", tmp_path / "x", colour="red")
    xq = retra.open(dbs["xiangqi"])
    with pytest.raises(retra.Error):
        xq.probe("not a fen")


def test_info_stats_and_coverage(dbs):
    db = retra.open(dbs["awari"])
    info = db.info()
    assert info["game"] == "awari" and len(info["segments"]) == 9
    assert db.coverage() == {"units": "stones", "largest": 8, "complete": 8, "segments": 9}
    assert [s["stones"] for s in db.stats()["segments"]] == list(range(9))
    assert "KRKG" in retra.open(dbs["xiangqi"]).stats()["endgames"]


def test_build_and_verify_with_progress(tmp_path):
    calls = []
    reports = retra.build("awari", tmp_path / "a", stones="0-10", threads=2,
                          progress=lambda label, done, total: calls.append((label, done, total)))
    assert [r["stones"] for r in reports] == list(range(11))
    again = retra.build("awari", tmp_path / "a", stones=10)  # a number works too
    assert all(r["skipped"] for r in again)
    rep = retra.verify(tmp_path / "a", threads=2, progress=lambda *a: None)
    assert rep["ok"] and len(rep["segments"]) == 11
    full = retra.verify(tmp_path / "a", full=True)
    assert full["mode"] == "full" and full["ok"]
    assert all(isinstance(c[0], str) and c[1] <= max(c[2], c[1]) for c in calls)


def test_a_failing_progress_callback_is_raised_after_the_build(tmp_path):
    def boom(label, done, total):
        raise KeyError("stop")
    with pytest.raises(KeyError):
        retra.build("awari", tmp_path / "b", stones="0-12", progress=boom)
    # The build itself finished: its files are complete and verify.
    assert retra.verify(tmp_path / "b")["ok"]


def test_threads_probe_concurrently(dbs):
    db = retra.open(dbs["awari"])
    positions = sample_positions(db, "awari", 30, seed=11)
    expected = [db.probe(p).json for p in positions]
    failures = []

    def worker():
        for p, e in zip(positions, expected):
            if db.probe(p).json != e:
                failures.append(p)
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_games_and_repr(dbs):
    assert set(retra.games()) >= {"awari", "xiangqi", "chess"}
    db = retra.open(dbs["chess"])
    r = db.probe("8/8/8/4k3/8/8/8/4K2R w - - 0 1")
    assert "chess" in repr(db) and "dtz=" in repr(r)
    assert r.value == "win" and r.outcome == "win"
