"""Compatibility with task modules written for the original Trace-Bench (on OpenTrace)."""
