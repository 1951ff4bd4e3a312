"""Tests of the environment probes (launcher, system, tools, hardware, network)."""
