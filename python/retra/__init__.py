"""retra: endgame databases from Python.

Open a database directory built by ``retra build`` (or by :func:`build`) and probe it::

    import retra
    db = retra.open("db")                   # Awari, xiangqi or chess: the manifest says which
    r = db.probe("1,1,1,1,1,2,4,2,3,0,0,0")  # value, every move with its value, best moves
    print(r.value, r.best, [m["value"] for m in r.moves])
    db.probe_many(["1,0,0,0,0,0,0,0,0,0,0,0", ...])   # values only, many at once
    db.stored("16", numpy.arange(1000))     # raw stored bytes by index (numpy fast path)

Values are in the game's terms, exactly as ``retra probe --json`` gives them (docs/PROBING.md):
Awari scores, xiangqi DTM/DTC bytes, chess WDL/DTZ/DTM. Errors raise :class:`Error` subclasses
with the library's messages. Probes release the GIL; a Database may be shared by threads.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Optional, Sequence

from ._retra import (  # noqa: F401  (re-exported)
    CorruptError,
    Error,
    InternalError,
    InvalidArgumentError,
    IOFailure,
    MismatchError,
    NotFoundError,
    ResourceError,
    _Database,
    _build,
    _verify,
    games,
)

__all__ = [
    "open", "build", "verify", "games", "Database", "ProbeResult", "Error", "InvalidArgumentError",
    "NotFoundError", "CorruptError", "IOFailure", "MismatchError", "ResourceError", "InternalError",
]

for _cls in (Error, InvalidArgumentError, NotFoundError, CorruptError, IOFailure, MismatchError,
             ResourceError, InternalError):
    _cls.__module__ = "retra"

Progress = Optional[Callable[[str, int, int], Any]]


class ProbeResult:
    """One probe's answer: the position's value and every move's, as ``retra probe --json``.

    ``value``: the position's value in the game's terms; ``moves``: one dict per move (its name,
    value, ``outcome`` win/draw/loss from the mover's view and ``child``, the position it leads
    to); ``best``: the best moves; ``json``: the whole answer as a dict.
    """

    __slots__ = ("json",)

    def __init__(self, json: dict):
        self.json = json

    @property
    def game(self) -> str:
        return self.json["game"]

    @property
    def position(self) -> str:
        return self.json.get("position") or self.json["fen"]

    @property
    def value(self) -> Any:
        return self.json["value"] if "value" in self.json else self.json["wdl"]

    @property
    def outcome(self) -> str:
        return self.json["outcome"]

    @property
    def moves(self) -> list:
        return [m for m in self.json["moves"] if m.get("legal", True)]

    @property
    def best(self) -> Any:
        return self.json["best"]

    def __getitem__(self, key: str) -> Any:
        return self.json[key]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProbeResult) and self.json == other.json

    def __repr__(self) -> str:
        extra = ""
        if self.game == "chess":
            extra = f", dtz={self.json['dtz']}, dtm={self.json['dtm']}"
        return (f"ProbeResult(game={self.game!r}, position={self.position!r}, "
                f"value={self.value!r}{extra}, outcome={self.outcome!r}, best={self.best!r})")


class Database:
    """A database directory opened read-only. Thread-safe; probes release the GIL."""

    def __init__(self, path: "os.PathLike[str] | str", cache_bytes: int = 64 << 20):
        self._db = _Database(os.fspath(path), cache_bytes)

    @property
    def game(self) -> str:
        """The game's name: "awari", "xiangqi" or "chess"."""
        return self._db.game

    @property
    def path(self) -> str:
        return self._db.path

    def info(self) -> dict:
        """The manifest: identity, segments with sizes and build records (``retra info --json``)."""
        return self._db.info()

    def stats(self) -> dict:
        """The statistics of every segment, as ``retra stats --json`` prints them."""
        return self._db.stats()

    def coverage(self) -> dict:
        """Sizes held: ``units``, ``largest`` and ``complete`` (every size up to it) and ``segments``."""
        return self._db.coverage()

    def probe(self, position: str) -> ProbeResult:
        """The value of a position (in the game's notation) and of each of its moves."""
        return ProbeResult(self._db.probe_report(position))

    def probe_many(self, positions: Iterable[str], strict: bool = True) -> list:
        """The values of many positions at once. With strict=False a position that cannot be
        probed gives None instead of raising."""
        return self._db.probe_many(list(positions), strict)

    def stored(self, segment: str, indices: Any) -> Any:
        """The stored bytes of `segment` at each index (a numpy array of uint8); the encodings are
        in docs/FORMAT.md. Needs numpy."""
        return self._db.stored(segment, indices)

    def __repr__(self) -> str:
        return f"retra.Database({self.path!r}, game={self.game!r})"


def open(path: "os.PathLike[str] | str", cache_bytes: int = 64 << 20) -> Database:  # noqa: A001
    """Opens a database directory for probing (reads the manifest; segments open on use)."""
    return Database(path, cache_bytes)


def build(game: str, db: "os.PathLike[str] | str", *, threads: int = 0, force: bool = False,
          kernel: str = "backward", memory: str = "80%", progress: Progress = None,
          **options: "str | Sequence[str]") -> list:
    """Builds segments of `game` into directory `db`, with everything they need, and returns one
    report dict per segment (as ``retra build --json`` lists them).

    `options` are the game's target options without dashes: ``stones="0-12"`` (Awari),
    ``endgame="KRKGG"`` or ``set="fang151"`` (xiangqi), ``endgame="KQvK,KRvK"`` and
    ``pieces="3"`` (chess). `progress(label, done, total)` is called about ten times a second.
    """
    return _build(game, os.fspath(db), threads, force, kernel, memory, progress, options)


def verify(db: "os.PathLike[str] | str", *, threads: int = 0, full: bool = False,
           progress: Progress = None) -> dict:
    """Checks every checksum and every value (``retra verify``); returns the report, whose "ok"
    is False with a "failure" naming the segment, block and position when a value is wrong."""
    return _verify(os.fspath(db), threads, full, progress)
