# Shared fixtures of the Python tests: small databases of every game, built once per session with
# retra.build, and the `retra` executable for comparisons with the CLI (RETRA_BINARY).
import os
import subprocess
import json

import pytest

import retra


@pytest.fixture(scope="session")
def retra_binary():
    path = os.environ.get("RETRA_BINARY")
    if not path:
        pytest.skip("RETRA_BINARY is not set (ctest sets it)")
    return path


@pytest.fixture(scope="session")
def dbs(tmp_path_factory):
    root = tmp_path_factory.mktemp("dbs")
    retra.build("awari", root / "awari", stones="0-8", threads=2)
    retra.build("xiangqi", root / "xq", endgame="KRKG", threads=2)
    retra.build("chess", root / "chess", endgame=["KRvK"], threads=2)
    return {"awari": root / "awari", "xiangqi": root / "xq", "chess": root / "chess"}


def cli_probe(binary, db, position):
    out = subprocess.run([binary, "probe", "--db", str(db), "--json", position],
                         capture_output=True, text=True)
    return json.loads(out.stdout)
