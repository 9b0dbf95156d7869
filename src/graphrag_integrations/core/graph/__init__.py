"""Graphs: the backend protocol, the networkx store, FalkorDB, batched neighbourhood reads,
term search.
"""
