"""Corpora of real, public evidence (logs, scripts) that nobody on this project wrote."""
