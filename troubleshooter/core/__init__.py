"""The knowledge core: facts, the condition language, the rule loader and checker, the pure engine, the probe contract."""
