"""Encoders: model resolution, embedding models, re-rankers."""
