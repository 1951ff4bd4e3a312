"""Suite-wide settings."""

from hypothesis import settings

# The suite is a regression gate: every property test replays the same examples on every run, so CI
# cannot turn red on a newly drawn example. Exploring with fresh randomness is the fuzz command's job
# (`python -m tests.fuzz TARGET --seconds N`); what it finds is kept in tests/fuzz/corpus/ and replayed here.
settings.register_profile("suite", derandomize=True, database=None)
settings.load_profile("suite")
