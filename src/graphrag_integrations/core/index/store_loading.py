"""Loading a persisted index store: graph and vectors read, checked against each other,
re-homed into another vector backend, and a write after the last persist rolled back.

:func:`load_store` is the body of
:meth:`IndexStore.load <graphrag_integrations.core.index.store.IndexStore.load>` (which
holds the folder's read lock around it): it opens the saved graph
(:func:`~graphrag_integrations.core.index.store_files.open_saved_graph`), reads each layer's
saved vectors, checks that every layer holds exactly the vectors of its nodes and copies
them into the store's vector backend when that is another one (e.g. Chroma; a server layer
that already holds the same content is reused unread).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

from graphrag_integrations.core.graph.backends import is_in_process
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.core.heap import release_free_heap
from graphrag_integrations.core.index.graph_changes import (
    changes_to_roll_back,
    check_unmoved,
    drop_gone_vectors,
)
from graphrag_integrations.core.index.node_ids import node_id
from graphrag_integrations.core.index.rollback import Rollback, active_rollback
from graphrag_integrations.core.index.store_base import (
    StoreBase,
    VectorIndexFactory,
    VectorMetadata,
    in_memory_vectors,
)
from graphrag_integrations.core.index.store_files import (
    VECTORS_DIR,
    content_checksum,
    open_saved_graph,
    saved_method,
    stored_graph_version,
    stored_index_id,
)
from graphrag_integrations.core.vector_store import InMemoryVectorIndex, VectorIndex
from graphrag_integrations.core.vector_store.protocol import LayerFactory, StoredLayer
from graphrag_integrations.errors import IndexMismatchError

logger = logging.getLogger(__name__)

S = TypeVar("S", bound=StoreBase)


def load_store(
    store_class: type[S],
    src: Path,
    *,
    model_name: str,
    dimension: int,
    layers: Mapping[str, str],
    factory: VectorIndexFactory | None,
    graph: type[GraphBackend] | None,
    metadata: VectorMetadata | None,
    cached_kinds: frozenset[str] = frozenset(),
) -> S:
    """A ``store_class`` holding the store persisted in ``src`` (a folder the caller holds
    open for reading); the parameters and errors are those of
    :meth:`IndexStore.load <graphrag_integrations.core.index.store.IndexStore.load>`."""
    opened = open_saved_graph(src, graph or GraphStore)
    store = store_class(
        model_name,
        layers,
        factory=factory,
        graph=type(opened),
        metadata=metadata,
        opened=opened,
    )
    store.dimension = dimension
    store.index_id = stored_index_id(src)
    rehome = factory is not None and factory is not in_memory_vectors
    checksum = content_checksum(src) if isinstance(factory, LayerFactory) else ""
    rollback = changes_to_roll_back(src, opened, active_rollback(), stored_graph_version(src))
    # what the folder says about these is stale (the method rebuilds it from the graph)
    store.later_writes = (
        rollback.later | rollback.hidden | rollback.journaled
        if rollback is not None
        else frozenset()
    )
    for kind, layer in store.layers.items():
        keys = store.keys(kind)
        if not keys:
            continue
        target = None
        if rehome:
            target = store._open_layer(layer, dimension, saved_method(src) if checksum else "")
            if rollback is None and _holds(store, target, checksum, len(keys)):
                # a server layer already holding this content: the vectors stay unread
                logger.info("reusing vector store layer %r (same content)", target)
                store.vectors[layer] = target
                continue
        cached = kind in cached_kinds and not is_in_process(type(store.graph))
        if (rollback is not None or cached) and not (src / VECTORS_DIR / layer).is_dir():
            # the killed batch's kind / a cache with nothing saved
            index = InMemoryVectorIndex(dimension, model_name)
        else:
            index = InMemoryVectorIndex.load(
                src / VECTORS_DIR / layer, model_name=model_name, dimension=dimension
            )
        if rollback is not None:
            _placeholders(store, rollback, kind, index, keys)
            drop_gone_vectors(src, kind, index, keys, rollback)
        if cached:
            keys = _drop_unsaved(store, src, kind, index, keys)
        if set(index.ids) != set(keys):
            error = (
                f"the {layer} vectors ({len(index)}) do not match the graph's "
                f"{len(keys)} {kind} nodes"
            )
            check_unmoved(src, store.graph, active_rollback(), error)
            raise IndexMismatchError(f"{src}: {error} (corrupt index)")
        store.vectors[layer] = index
        if target is not None:
            store.vectors[layer] = _rehome(store, kind, index, target, checksum)
    release_free_heap()  # the parsed JSON's temporaries
    return store


def _holds(store: StoreBase, target: VectorIndex, checksum: str, count: int) -> bool:
    """Whether ``target`` is a server layer of this index holding the persisted content
    ``checksum`` (``count`` records)."""
    return (
        bool(checksum)
        and isinstance(store.factory, LayerFactory)
        and isinstance(target, StoredLayer)
        and target.content_checksum == checksum
        and len(target) == count
    )


def _drop_unsaved(
    store: StoreBase, src: Path, kind: str, index: InMemoryVectorIndex, keys: list[str]
) -> list[str]:
    """``keys`` without the nodes of ``kind`` that have no saved vector, removed from the
    database graph (a cached kind: their vectors are recomputed when needed); ``keys``
    unchanged for a backend that cannot remove nodes."""
    remove_nodes = getattr(store.graph, "remove_nodes", None)
    if not callable(remove_nodes):
        return keys
    held = set(index.ids)
    unsaved = [key for key in keys if key not in held]
    if not unsaved:
        return keys
    logger.info(
        "%s: removing %d %s nodes without a saved vector from %r (computed after the "
        "last persist; recomputed when needed)",
        src,
        len(unsaved),
        kind,
        store.graph,
    )
    with store.writing():
        remove_nodes([node_id(kind, key) for key in unsaved])
    return [key for key in keys if key in held]


def _placeholders(
    store: StoreBase, rollback: Rollback, kind: str, index: InMemoryVectorIndex, keys: list[str]
) -> None:
    """Give a placeholder vector to the nodes of ``kind`` without a saved one whose provenance
    is all pending documents of ``rollback``
    (:meth:`~graphrag_integrations.core.index.store_base.StoreBase.add_placeholders`)."""
    held = set(index.ids)
    store.add_placeholders(rollback, kind, index, [key for key in keys if key not in held])


def _rehome(
    store: StoreBase, kind: str, loaded: InMemoryVectorIndex, target: VectorIndex, checksum: str
) -> VectorIndex:
    """``target`` (the layer's index in the factory's backend) filled with the loaded
    vectors: a stale Chroma collection / FalkorDB layer of this index is refilled."""
    if not isinstance(store.factory, LayerFactory) or not isinstance(target, StoredLayer):
        logger.info("copying the loaded %s vectors into %s", kind, store.factory)
        store._copy(kind, loaded, target)
        return target
    if len(target):
        logger.info(
            "refreshing vector store layer %r: it holds another version of this index",
            target,
        )
        target.clear()
    logger.info("copying the loaded %s vectors into %r", kind, target)
    store._copy(kind, loaded, target)
    target.set_content_checksum(checksum)
    return target
