"""Checks that a manifest matches what is loading it (method, format, embedding model)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from graphrag_integrations.core.encoders.models import same_embedding_model
from graphrag_integrations.core.persistence.manifest import (
    FORMAT_VERSION,
    Manifest,
    _package_version,
)
from graphrag_integrations.errors import IndexMismatchError

if TYPE_CHECKING:
    from graphrag_integrations.core.encoders.embeddings import Embedder


def check_manifest(
    manifest: Manifest,
    *,
    method: str,
    embedding_model: str | None = None,
    dimension: int | None = None,
    supported_format_version: int = FORMAT_VERSION,
    oldest_format_version: int = 1,
) -> Manifest:
    """Check that ``manifest`` matches what is loading it; returns it unchanged.

    Parameters
    ----------
    manifest : Manifest
        As read by :func:`read_manifest`.
    method : str
        The loader's method name.
    embedding_model : str, optional
        The loader's embedding model name (not checked when ``None``).
    dimension : int, optional
        The loader's embedding dimension (not checked when ``None``).
    supported_format_version : int
        Newest layout the loader reads.
    oldest_format_version : int
        Oldest layout the loader reads (an older one must be rebuilt).

    Raises
    ------
    IndexMismatchError
        With "expected ... found ..." for the first field that differs, checked in this order:
        method, format version, embedding model, dimension (so loading another method's index
        always says the method differs, whatever its format version).

    Examples
    --------
    >>> m = Manifest(method="dense", models={"embedding": "a"}, embedding_dimension=3)
    >>> check_manifest(m, method="dense", embedding_model="b")
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.IndexMismatchError: embedding model mismatch: expected 'b', \
found 'a' (the index was built with another model; load it with the same model or rebuild it)
    """
    if manifest.method != method:
        raise IndexMismatchError(
            f"method mismatch: expected {method!r}, found {manifest.method!r} "
            f"(load it with the class for {manifest.method!r})"
        )
    if manifest.format_version > supported_format_version:
        raise IndexMismatchError(
            f"index format version {manifest.format_version} is newer than supported "
            f"{supported_format_version} (written by graphrag-integrations "
            f"{manifest.package_version}, this is {_package_version()}); upgrade the package"
        )
    if manifest.format_version < oldest_format_version:
        raise IndexMismatchError(
            f"index format version {manifest.format_version} predates the oldest layout this "
            f"loader reads ({oldest_format_version}); rebuild the index"
        )
    if embedding_model is not None and not same_embedding_model(
        manifest.embedding_model, embedding_model
    ):
        raise IndexMismatchError(
            f"embedding model mismatch: expected {embedding_model!r}, found "
            f"{manifest.embedding_model!r} (the index was built with another model; load it "
            "with the same model or rebuild it)"
        )
    if dimension is not None and manifest.embedding_dimension != dimension:
        raise IndexMismatchError(
            f"embedding dimension mismatch: expected {dimension}, found "
            f"{manifest.embedding_dimension}"
        )
    return manifest


def check_embedder(manifest: Manifest, embedder: Embedder, *, source: str | Path = "") -> None:
    """Check that ``embedder`` matches the embedding model *and* dimension of ``manifest``.

    Call it at load time, so an embedding with the recorded model name but another vector
    length fails there with a clear message instead of at the first query. The dimension is
    only checked when the manifest records one (an index of no vectors records none). Model
    names are compared by :func:`~graphrag_integrations.core.encoders.models.same_embedding_model`:
    the
    bundled all-MiniLM-L6-v2's local path, its names and the default are the same model.

    Raises
    ------
    IndexMismatchError
        If the model name or the dimension differs.

    Examples
    --------
    >>> class Toy:
    ...     model_name, dimension = "toy", 8
    >>> check_embedder(Manifest(method="dense", models={"embedding": "toy"},
    ...                         embedding_dimension=4), Toy())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.IndexMismatchError: embedding dimension mismatch: the index \
holds vectors of dimension 4, the embedding 'toy' makes 8 ...
    """
    prefix = f"{source}: " if str(source) else ""
    if not same_embedding_model(manifest.embedding_model, embedder.model_name):
        raise IndexMismatchError(
            f"{prefix}embedding model mismatch: expected {embedder.model_name!r}, found "
            f"{manifest.embedding_model!r} (the index was built with another model; load it "
            "with the same model or rebuild it)"
        )
    recorded = manifest.embedding_dimension
    if recorded is not None and recorded != embedder.dimension:
        raise IndexMismatchError(
            f"{prefix}embedding dimension mismatch: the index holds vectors of dimension "
            f"{recorded}, the embedding {embedder.model_name!r} makes {embedder.dimension} "
            "(same model name, another configuration?); load it with the embedding it was "
            "built with or rebuild it"
        )
