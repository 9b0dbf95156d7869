"""Clue-RAG: multi-partite chunk / knowledge-unit / entity index with Q-Iter retrieval.

Sub-modules: ``selection`` (Algorithm 2, chunk selection under a token budget) with its
building blocks ``bleu`` and ``knapsack``; ``extraction`` (LLM knowledge-unit extraction with
sentence fallback).
"""
