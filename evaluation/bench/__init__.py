"""Benchmarks (`make bench`): measured in one run, never asserted by unit tests."""
