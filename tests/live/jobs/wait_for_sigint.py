"""Waits for Ctrl-C, says so, and exits like Python does on KeyboardInterrupt."""
import signal
import sys
import time


def on_sigint(_sig, _frame):
    print("job got SIGINT", flush=True)
    sys.exit(130)


signal.signal(signal.SIGINT, on_sigint)
print("waiting", flush=True)
time.sleep(60)
