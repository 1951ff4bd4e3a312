"""Writes awkward bytes to stdout and stderr: CRLF, NUL, invalid UTF-8, no final newline."""
import os

os.write(1, b"line one\r\nNUL:\x00 bad utf-8:\xff\xfe\n")
os.write(2, b"to stderr \xe2\x9c\x93\n")
os.write(1, b"no final newline")
