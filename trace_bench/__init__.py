"""trace-bench."""
