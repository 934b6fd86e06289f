"""report.html of a real, extended run, opened in headless Chromium with the network off.

The run: 6 trials of the quadratic example (Optuna, ASHA stopping some early, one
failing on purpose), then extended to 8 (a second part, tune-ext-1/). Chromium
(Debian's ``chromium``, installed here when missing) loads the page from disk
through a proxy that answers nothing; the DevTools protocol reports every request
the page makes and every plot's drawn SVG paths and WebGL pixels. A PNG of the
whole page is kept in the test's tmp directory.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import debian_tool

from factories import quadratic_sweep
from raysweep import api
from raysweep.rundir import RunDir

REPO = Path(__file__).resolve().parents[2]
SECTIONS_WITH_PLOTS = {"history": 2, "parallel": 1, "importance": 2, "curves": 1, "resources": 1}
# Chromium's own service traffic (updates, accounts), not the page's: it goes to the
# dead proxy like anything else, and is told apart here by host.
BROWSER_SERVICES = re.compile(r"\b[\w.-]*(google\.com|googleapis\.com|gstatic\.com)(:\d+)?\b")
GENERATED = re.compile(r'^<p class="generated">.*$', re.MULTILINE)
CHECK_PLOTS = """JSON.stringify(Array.from(document.querySelectorAll('section')).map(function(s){
 function inked(c){var t=document.createElement('canvas');t.width=c.width;t.height=c.height;
  var x=t.getContext('2d');x.drawImage(c,0,0);var d=x.getImageData(0,0,t.width,t.height).data,k=0;
  for(var i=3;i<d.length;i+=4){if(d[i]>0)k++}return k}
 return {id:s.id,plots:Array.from(s.querySelectorAll('.js-plotly-plot')).map(function(p){
  var r=p.getBoundingClientRect();return {id:p.id,width:r.width,height:r.height,
   paths:Array.from(p.querySelectorAll('svg path')).filter(function(e){
    return (e.getAttribute('d')||'').length>10}).length,
   inked:Array.from(p.querySelectorAll('canvas')).map(inked)}})}}))"""


class DeadProxy:
    """A loopback HTTP proxy that records each request line and answers 502."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    line = conn.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")
                    if line:  # Chromium may open a spare connection and close it unused
                        self.requests.append(line)
                    conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass

    def close(self) -> None:
        self.server.close()


class Browser:
    """Headless Chromium driven through the DevTools protocol (websocket-client)."""

    def __init__(self, binary: str, profile: Path, proxy_port: int) -> None:
        import websocket

        args = [
            binary, "--headless=new", "--no-sandbox", "--remote-debugging-port=0",
            f"--user-data-dir={profile}", f"--proxy-server=http://127.0.0.1:{proxy_port}",
            "--proxy-bypass-list=<-loopback>",  # even loopback goes to the dead proxy
            "--use-angle=swiftshader", "--enable-unsafe-swiftshader",  # WebGL without a GPU
            "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-extensions",
            "--window-size=1280,900", "about:blank",
        ]  # fmt: skip
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and "\n" in port_file.read_text()):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = int(port_file.read_text().splitlines()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as answer:
            page = next(t for t in json.load(answer) if t["type"] == "page")
        self.ws = websocket.create_connection(
            page["webSocketDebuggerUrl"], timeout=120, suppress_origin=True
        )
        self.events: list[dict[str, Any]] = []
        self._id = 0

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message["result"])
            self.events.append(message)

    def evaluate(self, expression: str) -> Any:
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)[
            "result"
        ].get("value")

    def requests(self) -> list[str]:
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
        ]

    def close(self) -> None:
        self.ws.close()
        self.process.terminate()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def extended_run(
    ray_session: None, tmp_path_factory: pytest.TempPathFactory, run_in_process: Callable[..., Path]
) -> RunDir:
    tmp = tmp_path_factory.mktemp("report-e2e")
    config = quadratic_sweep(
        name="report-e2e",
        space={
            "x": {"type": "uniform", "low": 0, "high": 6},
            "y": {"type": "int", "low": -3, "high": 3},
            "c": {"type": "choice", "values": ["a", "b"]},
            "steps": 8,
            "fail_above": 5.5,
        },
        search={"algorithm": "optuna", "num_samples": 6, "max_concurrent": 2},
        scheduler={"type": "asha", "max_t": 8, "grace_period": 2},
        seed=7,
    )
    run_dir, out = RunDir(run_in_process(tmp, config)), io.StringIO()
    assert api.resume_sweep(run_dir.path, api.RunOptions(num_samples=8), out=out) == 0, (
        out.getvalue()
    )
    return run_dir


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Browser, DeadProxy]]:
    binary = debian_tool("chromium")  # installed with apt-get when missing
    pytest.importorskip("websocket", reason="websocket-client drives Chromium (raysweep[dev])")
    proxy = DeadProxy()
    browser = Browser(binary, tmp_path_factory.mktemp("chromium-profile"), proxy.port)
    try:
        yield browser, proxy
    finally:
        browser.close()
        proxy.close()


def test_report_renders_every_plot_offline_in_chromium(
    extended_run: RunDir, browser: tuple[Browser, DeadProxy], tmp_path: Path
) -> None:
    chrome, proxy = browser
    results = extended_run.read_results()
    counts = results.counts()
    assert len(results.trials) == 8 and counts["errored"] == 1
    assert counts["completed"] and counts["stopped"]  # ASHA stopped some early
    assert [p.dir for p in extended_run.parts()] == ["tune", "tune-ext-1"]
    page = extended_run.html_report_path.resolve().as_uri()
    chrome.call("Network.enable")
    chrome.call("Page.enable")
    chrome.call("Page.navigate", url=page)
    deadline = time.monotonic() + 120
    while not chrome.evaluate("document.body && document.body.getAttribute('data-rendered')"):
        assert time.monotonic() < deadline, "the plots never finished rendering"
        time.sleep(0.2)
    sections = {s["id"]: s["plots"] for s in json.loads(chrome.evaluate(CHECK_PLOTS))}
    assert set(sections) >= {"summary", "top", "failures", "parts", *SECTIONS_WITH_PLOTS}
    for name, count in SECTIONS_WITH_PLOTS.items():
        plots = sections[name]
        assert len(plots) >= count, (name, plots)
        for plot in plots:
            assert plot["width"] > 300 and plot["height"] > 200, plot
            assert plot["paths"] > 0, f"{plot['id']}: no SVG drawn"
            assert all(pixels > 0 for pixels in plot["inked"]), f"{plot['id']}: blank canvas"
    assert any(plot["inked"] for plot in sections["parallel"])  # parallel coordinates: WebGL
    assert chrome.requests() == [page]  # the page asked for nothing but itself
    assert [r for r in proxy.requests if not BROWSER_SERVICES.search(r)] == []
    height = chrome.evaluate("document.documentElement.scrollHeight")
    chrome.call("Emulation.setDeviceMetricsOverride", width=1280, height=height,
                deviceScaleFactor=1, mobile=False)  # fmt: skip
    shot = chrome.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
    png = tmp_path / "report.png"  # the test artifact
    png.write_bytes(base64.b64decode(shot["data"]))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 50_000
    print(f"screenshot: {png}")


def test_the_report_shows_what_the_run_did(extended_run: RunDir) -> None:
    html = extended_run.html_report_path.read_text()
    assert "deliberate failure: x=" in html  # the failure with its error text
    assert '"text":"tune-ext-1"' in html and '"text":"2: ' in html  # both parts marked
    assert "stopped early here" in html  # early-stopped trials visible in the curves
    text = extended_run.report_path.read_text()
    assert "Parameter importance (fANOVA" in text and "7 trials" in text  # all but the error


def test_sweep_report_reproduces_the_files_of_the_run(extended_run: RunDir, tmp_path: Path) -> None:
    text = extended_run.report_path.read_text()
    html = extended_run.html_report_path.read_text()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "raysweep.cli", "report", str(extended_run.path)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == text
    assert extended_run.report_path.read_text() == text
    again = extended_run.html_report_path.read_text()
    assert again != html or GENERATED.search(html)  # written again (the time may not move)
    assert GENERATED.sub("", again) == GENERATED.sub("", html)
