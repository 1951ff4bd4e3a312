"""A launcher the job's config asks for that is not installed.

Hydra-configured trainers pick their launcher in the config (hydra/launcher=submitit_slurm,
submitit_local, joblib): without the plugin package every rank stops while composing the config, with
Hydra's abridged report and no traceback (agentic-learning-ai-lab/midway-network#1, under torchrun).
submitit asked for SLURM on a machine without srun says so in its own words. Either is a missing tool,
not an unknown failure; a missing config file of the project's own is not."""

from __future__ import annotations

import pytest

from tests.logs.helpers import root_and_shown

TORCHRUN_BANNER = """[2026-02-02 16:08:09,507] torch.distributed.run: [WARNING] *****************************************
[2026-02-02 16:08:09,507] torch.distributed.run: [WARNING] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed.
[2026-02-02 16:08:09,507] torch.distributed.run: [WARNING] *****************************************
"""

MISSING_LAUNCHER = [
    # Hydra >= 1.1's abridged report, one per rank under torchrun
    TORCHRUN_BANNER + """In 'hydra/config': Could not find 'hydra/launcher/submitit_local'

Available options in 'hydra/launcher':
	basic
Config search path:
	provider=hydra, path=pkg://hydra.conf
	provider=main, path=file:///home/user/project/configs
	provider=schema, path=structured://

Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.
""",
    # the same with HYDRA_FULL_ERROR=1: the exception class in front
    "hydra.errors.MissingConfigException: In 'hydra/config': Could not find 'hydra/launcher/submitit_slurm'\n",
    # Hydra 1.0's wording of a missing override
    "hydra.errors.MissingConfigException: Could not load override hydra/launcher/joblib\n",
    # submitit asked for SLURM where there is none
    """  File "/home/user/env/lib/python3.10/site-packages/submitit/auto/auto.py", line 80, in __init__
    self._executor = flexible_executor(folder, **kwargs)
RuntimeError: Could not detect "srun", are you indeed on a slurm cluster?
""",
]


@pytest.mark.parametrize("text", MISSING_LAUNCHER)
def test_a_launcher_that_is_not_installed_is_a_missing_tool(rules, text):
    root, shown = root_and_shown(rules, text)
    assert (root, shown[:1]) == ("tool-missing", ["tool-missing"])


def test_a_missing_config_of_the_project_is_not_a_missing_tool(rules):
    text = """In 'default_config': Could not find 'hydra/defaults'

Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.
"""
    root, _shown = root_and_shown(rules, text)
    assert root != "tool-missing"
