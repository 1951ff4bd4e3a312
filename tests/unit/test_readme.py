"""The README's two set-up commands exist, and CI runs the test command verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def setup_commands() -> list[str]:
    section = ROOT.joinpath("README.md").read_text().split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section, re.S)


def test_exactly_two_setup_commands() -> None:
    commands = setup_commands()
    assert len(commands) == 2
    assert commands[0].endswith("troubleshoot --auto") and "pytest" in commands[1]
    assert all("torch==2.13.0" in c for c in commands)


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci_lines = ROOT.joinpath(".ci/run").read_text().splitlines()
    assert setup_commands()[1] in ci_lines


def test_writing_a_rule_example_is_the_shipped_rule() -> None:
    import yaml

    section = ROOT.joinpath("README.md").read_text().split("## Writing a rule", 1)[1]
    example = yaml.safe_load(re.search(r"```yaml\n(.+?)\n```", section, re.S).group(1))
    shipped = yaml.safe_load(ROOT.joinpath("rules", "checks", f"{example['id']}.yaml").read_text())
    assert example == shipped
