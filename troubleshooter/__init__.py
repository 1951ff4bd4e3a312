"""ddp-troubleshooter: diagnose PyTorch DistributedDataParallel problems from real evidence."""

__version__ = "0.1.0"
