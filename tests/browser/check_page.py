#!/usr/bin/env python3
"""check_page.py PAGE.html STATES.json [--shots DIR NAME [PLAYER]]

Drive a baton teaching page in headless Chromium (through chromedriver's
WebDriver HTTP interface; Python's standard library only) with the network
off, and hold it to the simulator: for every player, every run on it (picked
from its list where it has one) and every step, the buffers the page shows
must be exactly the simulator's buffers after that step (STATES.json, written
by `baton ... --html PAGE --states STATES`). Keys drive it as a person would:
right arrow through every step, then left, Home, End and space. With --shots,
screenshots of player PLAYER (default 0; its first run shown) at its first,
middle and last step go to DIR/NAME-{first,middle,last}.png.

The page is read at a 1280 x 900 viewport, a laptop's, and held to its
layout there at every step: it never scrolls sideways (a wide table scrolls
inside its own box), and runs shown on one clock (the kids' three methods) sit
side by side, each inside the viewport's width, their tops above the fold.

Exit 0 when every check holds; 1 with the first difference; 77 (skip) when no
browser or chromedriver is installed."""
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

VIEWPORT = (1280, 900)
KEYS = {"right": "\ue014", "left": "\ue012", "home": "\ue011", "end": "\ue010", "space": " "}
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


class Fail(Exception):
    pass


class Driver:
    """The few WebDriver commands the check needs."""

    def __init__(self, browser, driver):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen([driver, "--port=%d" % self.port], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                if self.call("GET", "/status")["ready"]:
                    break
            except OSError:
                time.sleep(0.05)
        args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1500,1100", "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
                "--host-resolver-rules=MAP * ~NOTFOUND", "--no-first-run", "--disable-extensions"]
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome",
                                                 "goog:chromeOptions": {"binary": browser, "args": args}}}}
        self.sid = self.call("POST", "/session", caps)["sessionId"]
        self.viewport(*VIEWPORT)

    def viewport(self, w, h):
        """Size the window so the page itself gets w x h CSS pixels."""
        self.s("POST", "/window/rect", {"width": w, "height": h})
        iw, ih = self.js("return [innerWidth, innerHeight];")
        self.s("POST", "/window/rect", {"width": 2 * w - iw, "height": 2 * h - ih})
        got = self.js("return [innerWidth, innerHeight];")
        if got != [w, h]:
            raise Fail("the viewport is %s, not %dx%d" % (got, w, h))

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, path), data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return json.loads(r.read())["value"]
        except urllib.error.HTTPError as e:
            raise Fail("webdriver %s %s: %s" % (method, path, e.read()[:400]))

    def s(self, method, path, body=None):
        return self.call(method, "/session/%s%s" % (self.sid, path), body)

    def js(self, script, *args):
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def key(self, element, name):
        self.js("arguments[0].focus();", element)
        k = KEYS[name]
        self.s("POST", "/actions", {"actions": [{"type": "key", "id": "kb", "actions": [
            {"type": "keyDown", "value": k}, {"type": "keyUp", "value": k}]}]})

    def quit(self):
        try:
            self.s("DELETE", "")
        finally:
            self.proc.terminate()
            self.proc.wait()


READ = """
const sec = document.querySelector('section.player[data-player="' + arguments[0] + '"]');
const out = {clock: sec.querySelector('.clock').textContent, panels: [],
             width: innerWidth, height: innerHeight, scroll: document.documentElement.scrollWidth};
for (const pn of sec.querySelectorAll('.panel')) {
  if (pn.hidden) continue;
  const box = pn.getBoundingClientRect();
  const rows = [], load = [];
  for (const tr of pn.querySelectorAll('table.run tbody tr')) {
    rows.push(Array.from(tr.querySelectorAll('td.v')).map((td) => td.textContent));
    load.push([tr.querySelector('td.said').textContent, tr.querySelector('td.heard').textContent].map(Number));
  }
  out.panels.push({tape: Number(pn.dataset.tape), rows: rows, load: load,
                   box: [box.left, box.top + scrollY, box.right, box.bottom + scrollY]});
}
return out;
"""


def expected_index(times, t):
    """The simulator's snapshot at clock t: after every step at or before it."""
    return sum(1 for x in times if x <= t)


def check_layout(got, where, first):
    """No sideways scrolling; panels on one clock side by side in the viewport.
    The tops are page coordinates: at the first player's start they must be
    above the fold (visible without scrolling)."""
    if got["scroll"] > got["width"]:
        raise Fail("%s: the page is %d px wide in a %d px viewport (it scrolls sideways)" % (where, got["scroll"],
                                                                                             got["width"]))
    boxes = [p["box"] for p in got["panels"]]
    for i, b in enumerate(boxes):
        if b[0] < 0 or b[2] > got["width"]:
            raise Fail("%s: panel %d spans x %.0f..%.0f, outside the %d px viewport" % (where, i, b[0], b[2],
                                                                                       got["width"]))
        if i and (abs(b[1] - boxes[0][1]) > 1 or b[0] < boxes[i - 1][2]):
            raise Fail("%s: panel %d at (%.0f, %.0f) is not beside panel %d at (%.0f, %.0f)" % (
                where, i, b[0], b[1], i - 1, boxes[i - 1][0], boxes[i - 1][1]))
        if first and len(boxes) > 1 and b[1] >= got["height"]:
            raise Fail("%s: panel %d starts at y %.0f, below the %d px fold" % (where, i, b[1], got["height"]))


def check_step(d, pi, player, shown, clock, k, where):
    got = d.js(READ, pi)
    check_layout(got, where, pi == 0 and k == 0)
    want_clock = "step %d of %d" % (k, len(clock))
    if want_clock not in got["clock"]:
        raise Fail("%s: the clock says '%s', expected '%s'" % (where, got["clock"], want_clock))
    if [p["tape"] for p in got["panels"]] != shown:
        raise Fail("%s: panels %s shown, expected %s" % (where, [p["tape"] for p in got["panels"]], shown))
    t = clock[k - 1] if k else float("-inf")
    for pn in got["panels"]:
        tape = player["tapes"][pn["tape"]]
        snap = tape["buffers"][expected_index(tape["times"], t)]
        want = [[str(v) for v in row] for row in snap]
        if pn["rows"] != want:
            raise Fail("%s, run %s: the page shows %s, the simulator had %s" % (where, tape["title"], pn["rows"], want))
        if k == len(clock) and pn["load"] != tape["load"]:
            raise Fail("%s, run %s: said/heard %s, the simulator counted %s" % (where, tape["title"], pn["load"],
                                                                             tape["load"]))


def shoot(d, section, path):
    png = d.s("GET", "/element/%s/screenshot" % section[ELEMENT])
    with open(path, "wb") as f:
        f.write(base64.b64decode(png))


def check_run(d, pi, player, shown, section, shots):
    """Every step forward, then back, start, end and play/pause, by keys."""
    times = sorted({t for j in shown for t in player["tapes"][j]["times"]})
    where = "player %d, runs %s" % (pi, [player["tapes"][j]["title"] for j in shown])
    n = len(times)
    d.key(section, "home")
    for k in range(n + 1):
        check_step(d, pi, player, shown, times, k, "%s, step %d" % (where, k))
        if shots and k in (0, n // 2, n):
            shoot(d, section, "%s-%s.png" % (shots, {0: "first", n // 2: "middle", n: "last"}[k]))
        d.key(section, "right")
    check_step(d, pi, player, shown, times, n, where + ", right arrow past the end")
    for k in range(n - 1, max(-1, n - 4), -1):
        d.key(section, "left")
        check_step(d, pi, player, shown, times, k, "%s, back to step %d" % (where, k))
    d.key(section, "home")
    check_step(d, pi, player, shown, times, 0, where + ", Home")
    d.key(section, "end")
    check_step(d, pi, player, shown, times, n, where + ", End")
    d.key(section, "space")             # play from the start (it was at the end) ...
    d.key(section, "space")             # ... and pause: wherever it stopped, it must be right
    clock = d.js(READ, pi)["clock"]
    k = int(clock.split("step ")[1].split(" of")[0])
    check_step(d, pi, player, shown, times, k, where + ", after play and pause")
    return n


def check_page(d, page, states, shots, shot_player):
    d.s("POST", "/url", {"url": "file://" + os.path.abspath(page)})
    nplayers = d.js("return window.batonPlayers ? window.batonPlayers.length : -1;")
    if nplayers != len(states["players"]):
        raise Fail("the page has %d players (-1: its script did not run), the states %d" % (nplayers,
                                                                                           len(states["players"])))
    fetched = d.js("return performance.getEntriesByType('resource').map((r) => r.name);")
    if fetched:
        raise Fail("the page fetched %s" % fetched)
    steps = runs = 0
    for pi, player in enumerate(states["players"]):
        section = d.s("POST", "/element", {"using": "css selector", "value": 'section.player[data-player="%d"]' % pi})
        groups = [[j] for j in range(len(player["tapes"]))] if player["pick"] else [list(range(len(player["tapes"])))]
        for shown in groups:
            if player["pick"]:
                opt = d.s("POST", "/element", {"using": "css selector",
                                               "value": 'section.player[data-player="%d"] select.pick option[value="%d"]'
                                                        % (pi, shown[0])})
                d.s("POST", "/element/%s/click" % opt[ELEMENT], {})
            first = not player["pick"] or shown[0] == player["chosen"]
            steps += check_run(d, pi, player, shown, section, shots if pi == shot_player and first else None)
            runs += len(shown)
    return runs, steps


def main(argv):
    if len(argv) not in (3, 6, 7) or (len(argv) > 3 and argv[3] != "--shots"):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        print("SKIP: no Chromium and chromedriver here (as root, scripts/deps.sh installs the Debian packages "
              "chromium and chromium-driver)")
        return 77
    with open(argv[2]) as f:
        states = json.load(f)
    shots = os.path.join(argv[4], argv[5]) if len(argv) > 3 else None
    shot_player = int(argv[6]) if len(argv) == 7 else 0
    d = Driver(browser, driver)
    try:
        runs, steps = check_page(d, argv[1], states, shots, shot_player)
    except Fail as e:
        print("FAIL %s: %s" % (argv[1], e))
        return 1
    finally:
        d.quit()
    print("ok %s: %d runs, %d steps, every step's buffers as the simulator had them" % (os.path.basename(argv[1]),
                                                                                          runs, steps))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
