"""Drive the real terminal: ``troubleshoot`` in tmux, walk "multi-node-fails" to a diagnosis, export HTML."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections import deque
from pathlib import Path

import pytest

from troubleshooter.core.ruleset import load_rules

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
TREE = "multi-node-fails"


def question_path(tree: dict) -> list[tuple[str, int]]:
    """The shortest answers-only route from the start to a conclusion: [(ask node, answer index)]."""
    nodes = tree["nodes"]
    todo = deque([(tree["start"], [])])
    seen = set()
    while todo:
        node_id, route = todo.popleft()
        if node_id in seen:
            continue
        seen.add(node_id)
        node = nodes[node_id]
        if "conclude" in node and "requires" not in node:
            return route
        for index, target in enumerate((node.get("answers") or {}).values()):
            todo.append((target, route + [(node_id, index)]))
    raise AssertionError(f"{tree['id']}: no conclusion reachable by answers alone")


class Tmux:
    """One tmux server of our own (its own socket), killed at the end."""

    def __init__(self, cwd: Path, env: dict[str, str]):
        self.socket = f"tui-test-{uuid.uuid4().hex[:8]}"
        self.cwd, self.env = cwd, env

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=20,
                              env=self.env).stdout

    def start(self, command: str) -> None:
        self.run("new-session", "-d", "-s", "t", "-x", "100", "-y", "30", "-c", str(self.cwd), command)

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.run("send-keys", "-t", "t", key)
            time.sleep(0.15)

    def screen(self) -> str:
        return self.run("capture-pane", "-t", "t", "-p")

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} did not appear; the screen shows:\n{self.screen()}")

    def kill(self) -> None:
        self.run("kill-server")


def test_walk_multi_node_fails_in_a_real_terminal(tmp_path):
    rules = load_rules()
    if TREE not in rules.trees:
        pytest.skip(f"rules/trees/{TREE}.yaml is not in this checkout")
    tree = rules.trees[TREE]
    menu = [t["id"] for t in sorted(rules.trees.values(), key=lambda t: (t.get("order", 100), t["title"]))]
    exe = shutil.which("troubleshoot") or f"{sys.executable} -m troubleshooter"
    env = {**os.environ, "TROUBLESHOOTER_STATE_DIR": str(tmp_path / "state"), "TERM": "xterm-256color"}
    tmux = Tmux(tmp_path, env)
    tmux.start(f"{exe}; sleep 30")
    try:
        tmux.wait_for("What is going wrong?", timeout=60)
        tmux.wait_for(tree["title"], timeout=60)  # the rules loaded behind the first screen
        tmux.keys(*["Down"] * menu.index(TREE), "Enter")
        for node_id, index in question_path(tree):
            tmux.wait_for(tree["nodes"][node_id]["ask"][:40].split("`")[0])
            tmux.keys(*["Down"] * index, "Enter")
        tmux.wait_for("See the diagnosis")
        tmux.keys("d")
        tmux.wait_for("root cause first")
        tmux.keys("e")
        tmux.wait_for("Export the report")
        tmux.keys("Enter")
        report = tmp_path / "ddp-diagnosis.html"
        deadline = time.monotonic() + 20
        while not report.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        html = report.read_text(encoding="utf-8")
        tmux.keys("C-q")
        tmux.wait_for("Quit now")
        tmux.keys("Down", "Enter")
    finally:
        tmux.kill()
    route = question_path(tree)
    concluded = rules.trees[TREE]["nodes"]
    last = route[-1]
    end = list(concluded[last[0]]["answers"].values())[last[1]]
    conclusions = concluded[end]["conclude"]
    for finding_id in [conclusions] if isinstance(conclusions, str) else conclusions:
        if finding_id != "none":
            assert finding_id in html
    assert "Path walked" in html and end in html and route[0][0] in html
    assert (tmp_path / "state" / "recovery.json").exists()  # a plain quit keeps the session for resuming
