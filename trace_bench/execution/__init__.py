"""Executors: where job processes run (local process pool by default, Ray optionally)."""
