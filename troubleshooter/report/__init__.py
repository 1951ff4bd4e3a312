"""The report document, its rendering and secret redaction."""
