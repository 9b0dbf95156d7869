"""Indexes: the lifecycle base class, building, persist / load, the graph + vector store,
checkpoints, rollback, locking, build executors.
"""
