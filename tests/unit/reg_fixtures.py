"""A toy movie KG shared by the ReG tests (MetaQA-shaped relations)."""

from __future__ import annotations

from typing import Any

from graphrag_integrations.methods.reg.index import RegIndex
from graphrag_integrations.methods.reg.kg import Triple
from tests.conftest import FakeEmbedder

MOVIES: list[Triple] = [
    ("Kismet", "directed_by", "William Dieterle"),
    ("Kismet", "starred_actors", "Ronald Colman"),
    ("Kismet", "release_year", "1944"),
    ("Kismet", "has_genre", "Drama"),
    ("Random Harvest", "starred_actors", "Ronald Colman"),
    ("Random Harvest", "directed_by", "Mervyn LeRoy"),
    ("Random Harvest", "release_year", "1942"),
    ("Random Harvest", "has_genre", "Drama"),
    ("Juarez", "directed_by", "William Dieterle"),
    ("Juarez", "starred_actors", "Bette Davis"),
    ("Juarez", "release_year", "1939"),
    ("Juarez", "written_by", "John Huston"),
    ("Now Voyager", "starred_actors", "Bette Davis"),
    ("Now Voyager", "has_genre", "Drama"),
    ("Now Voyager", "written_by", "Casey Robinson"),
]


def movie_index(**kwargs: Any) -> RegIndex:
    kwargs.setdefault("embedding", FakeEmbedder())
    return RegIndex.from_triples(MOVIES, doc_id="movies", **kwargs)
