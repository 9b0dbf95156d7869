"""Ranking and scoring shared by the baselines and the methods: top-k, score fusion, metadata
filters, BM25 and personalized PageRank."""
