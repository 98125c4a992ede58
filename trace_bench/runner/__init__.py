"""The runner: plans a run, schedules job processes, and keeps the run directory up to date."""
