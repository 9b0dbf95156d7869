"""Baseline retrievers (dense, BM25, hybrid) run beside every method in the same process."""
