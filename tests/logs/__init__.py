"""Log analyzer tests."""
