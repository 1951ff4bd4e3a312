"""`troubleshoot launch`: ready-to-submit scripts that run the diagnosis across nodes."""
