# The web explorer in a real browser (headless Chromium through Selenium, all from Debian): for
# positions the test picks, the page shows the value `retra probe --json` gives; a click on a move
# (in the list or on the board) shows the child and its value; Undo, the position box, the
# permalink and an error message work. With RETRA_SCREENSHOTS=DIR it saves each game's page there.
import json
import os
import random
import shutil
import subprocess
import time

import pytest

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

RETRA = os.environ.get("RETRA_BINARY", "")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

POSITIONS = {
    "awari": ["1,1,1,1,1,2,1,0,0,0,0,0", "0,2,0,1,1,0,2,1,0,0,0,1"],
    "xq": ["3k5/9/9/9/9/9/9/9/4R4/4K4 w", "3k1g3/9/9/9/9/9/9/4R4/9/4K4 w"],
    "chess": ["8/8/8/4k3/8/8/8/4K2R w - - 0 1", "8/8/8/8/3k4/8/1R6/4K3 b - - 0 1"],
}


def cli_probe(db, position):
    out = subprocess.run([RETRA, "probe", "--db", str(db), "--json", position],
                         capture_output=True, text=True, check=True)
    j = json.loads(out.stdout)
    return j["value"] if "value" in j else j["wdl"], j


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not RETRA or not os.path.exists(CHROMEDRIVER):
        # The suite (ctest) sets RETRA_REQUIRE_BROWSER: there a missing browser is a failure.
        if os.environ.get("RETRA_REQUIRE_BROWSER"):
            pytest.fail("needs RETRA_BINARY and chromium-driver (scripts/setup.sh installs it)")
        pytest.skip("needs RETRA_BINARY and chromium-driver")
    root = tmp_path_factory.mktemp("explorer")
    for args, name in [(["awari", "--stones", "0-8"], "awari"),
                       (["xiangqi", "--endgame", "KRKG"], "xq"),
                       (["chess", "--endgame", "KRvK"], "chess")]:
        subprocess.run([RETRA, "build", *args, "--db", str(root / name), "--no-progress",
                        "--threads", "2"], check=True, capture_output=True)
    proc = subprocess.Popen([RETRA, "serve", "--port", "0", "--json", "--db", str(root / "awari"),
                             "--db", str(root / "xq"), "--db", str(root / "chess")],
                            stdout=subprocess.PIPE, text=True)
    text = ""
    while True:  # the JSON document printed once listening
        line = proc.stdout.readline()
        assert line, "retra serve exited before listening"
        text += line
        try:
            info = json.loads(text)
            break
        except json.JSONDecodeError:
            continue
    yield {"url": info["url"], "dbs": {d["name"]: d["dir"] for d in info["databases"]}}
    proc.terminate()
    assert proc.wait(timeout=10) == 0  # SIGTERM stops it cleanly


@pytest.fixture(scope="module")
def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,1100"]:
        opts.add_argument(a)
    from selenium.webdriver.chrome.service import Service
    service = Service(executable_path=CHROMEDRIVER)
    driver = webdriver.Chrome(options=opts, service=service)
    yield driver
    driver.quit()


def shown(driver):
    v = driver.find_element(By.ID, "value")
    return json.loads(v.get_attribute("data-value")), v.get_attribute("data-position")


def wait_for_position(driver, position, timeout=10):
    WebDriverWait(driver, timeout).until(
        lambda d: d.find_element(By.ID, "value").get_attribute("data-position") == position)


def open_page(driver, server, db, position):
    from urllib.parse import quote
    driver.get(f"{server['url']}explore?db={db}&position={quote(position)}")
    WebDriverWait(driver, 10).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")


def walk(db, start, plies, rng):
    """A position `plies` random moves after `start` (following `retra probe`'s children)."""
    position = start
    for _ in range(plies):
        moves = [m for m in cli_probe(db, position)[1]["moves"] if m.get("legal", True)]
        if not moves:
            break
        position = rng.choice(moves)["child"]
    return position


@pytest.mark.parametrize("db", ["awari", "xq", "chess"])
def test_the_page_shows_the_cli_value_and_plays_moves(server, browser, db):
    d = server["dbs"][db]
    # The fixed positions, then positions chosen by random walks from them (seed printed).
    seed = int(os.environ.get("RETRA_BROWSER_SEED", "20261127"))
    rng = random.Random(seed)
    print(f"{db}: random walks with seed {seed}")
    positions = POSITIONS[db] + [walk(d, p, rng.randint(1, 6), rng) for p in POSITIONS[db]]
    for position in positions:
        open_page(browser, server, db, position)
        expected, j = cli_probe(d, position)
        value, shown_position = shown(browser)
        print(f"{db} {position}: page shows {value!r}, retra probe says {expected!r}")
        assert value == expected
        assert shown_position == (j.get("position") or j.get("fen"))
        # Every legal move is listed, coloured by its outcome.
        items = browser.find_elements(By.CSS_SELECTOR, "#moves li[data-child]")
        legal = [m for m in j["moves"] if m.get("legal", True)]
        assert len(items) == len(legal)
        for li, m in zip(items, legal):
            assert (m.get("outcome") or "") in li.get_attribute("class")
        if not items:  # a decided position (a king capturable, no armed piece left)
            continue
        # Click the last listed move: the page shows the child and the child's value.
        child, label = items[-1].get_attribute("data-child"), items[-1].get_attribute("data-move")
        child_expected, cj = cli_probe(d, child)
        items[-1].click()
        wait_for_position(browser, cj.get("position") or cj.get("fen"))
        child_value, _ = shown(browser)
        print(f"  clicked {label}: page shows {child_value!r}, retra probe says {child_expected!r}")
        assert child_value == child_expected
        # Undo goes back.
        browser.find_element(By.ID, "undo").click()
        wait_for_position(browser, shown_position)
        # The permalink reproduces the position.
        assert "position=" in browser.find_element(By.ID, "permalink").get_attribute("href")
    if os.environ.get("RETRA_SCREENSHOTS"):
        open_page(browser, server, db, POSITIONS[db][0])
        time.sleep(0.3)
        browser.save_screenshot(os.path.join(os.environ["RETRA_SCREENSHOTS"],
                                             f"explorer-{db}.png"))


def test_a_move_is_played_by_clicking_the_board(server, browser):
    # Awari: click the mover's pit.
    open_page(browser, server, "awari", "1,1,1,1,1,2,1,0,0,0,0,0")
    _, j = cli_probe(server["dbs"]["awari"], "1,1,1,1,1,2,1,0,0,0,0,0")
    browser.find_element(By.CSS_SELECTOR, "g.pit[data-pit='f']").click()
    wait_for_position(browser, j["moves"][5]["child"])
    # Xiangqi: click the rook, then its target marker.
    position = "3k5/9/9/9/9/9/9/9/4R4/4K4 w"
    open_page(browser, server, "xq", position)
    _, j = cli_probe(server["dbs"]["xq"], position)
    browser.find_element(By.CSS_SELECTOR, "g.piece[data-square='e1']").click()
    target = browser.find_elements(By.CSS_SELECTOR, "circle.target")
    assert len(target) == sum(1 for m in j["moves"] if m["move"].startswith("Re1"))
    index = int(target[0].get_attribute("data-move-index"))
    target[0].click()
    wait_for_position(browser, j["moves"][index]["child"])
    assert shown(browser)[0] == cli_probe(server["dbs"]["xq"], j["moves"][index]["child"])[0]


def test_the_position_box_and_errors(server, browser):
    open_page(browser, server, "chess", POSITIONS["chess"][0])
    box = browser.find_element(By.ID, "position-input")
    box.clear()
    box.send_keys("8/8/8/8/3k4/8/1R6/4K3 b - - 0 1")
    browser.find_element(By.ID, "go").click()
    wait_for_position(browser, "8/8/8/8/3k4/8/1R6/4K3 b - - 0 1")
    box = browser.find_element(By.ID, "position-input")
    box.clear()
    box.send_keys("not a position")
    browser.find_element(By.ID, "go").click()
    WebDriverWait(browser, 10).until(
        lambda d: d.find_element(By.ID, "error").is_displayed())
    assert "FEN" in browser.find_element(By.ID, "error").text or \
        browser.find_element(By.ID, "error").text
    # The last good position stays on the board.
    assert shown(browser)[1] == "8/8/8/8/3k4/8/1R6/4K3 b - - 0 1"


def test_the_start_page_lists_the_databases(server, browser):
    browser.get(server["url"])
    WebDriverWait(browser, 10).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#databases a")) == 3)
    names = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#databases a")]
    assert names == ["awari", "xq", "chess"]
