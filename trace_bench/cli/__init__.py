"""The ``trace-bench`` command line: parses and prints, nothing more."""
