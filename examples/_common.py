"""Shared set-up of the framework examples: the bundled sample, a cached ClueIndex, the local LM.

The examples import this module by name (``from _common import ...``), which works because
``python examples/NAME.py`` puts ``examples/`` first on ``sys.path``.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path
from typing import Any

from quickstart import ANSWER_PROMPT, HERE, titled_documents

from graphrag_integrations.core.llm import TransformersLLM
from graphrag_integrations.core.text.documents import content_id
from graphrag_integrations.errors import IndexNotFoundError
from graphrag_integrations.methods.clue.explain import describe_path
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.qiter import QIter

__all__ = [
    "ANSWER_PROMPT",
    "DEFAULT_INDEX_ROOT",
    "example_arguments",
    "local_llm",
    "one_torch_thread",
    "print_source",
    "sample_qiter",
    "sample_questions",
]

logger = logging.getLogger(__name__)

CORPUS = HERE / "data" / "sample_corpus"
QUESTIONS = HERE / "data" / "sample_questions.json"
DEFAULT_INDEX_ROOT = Path(".graphrag_cache/examples")


def sample_qiter(
    index_root: Path = DEFAULT_INDEX_ROOT, k: int | None = None, **overrides: Any
) -> QIter:
    """Q-Iter over the bundled sample corpus, indexing it once and reloading it afterwards.

    The index lives in ``index_root/<corpus hash>``, so editing the corpus builds a new one
    instead of silently reusing a stale index.

    Parameters
    ----------
    index_root : Path
        Parent folder of the persisted indexes.
    k : int, optional
        Chunks per query (``None``: the query params' ``N``).
    **overrides
        ``ClueQueryParams`` fields (``K``, ``D``, ``M``...) for ``ClueIndex.as_retriever``.

    Returns
    -------
    QIter

    Examples
    --------
    >>> qiter = sample_qiter(k=5)  # doctest: +SKIP
    >>> hits = qiter.retrieve("Who directed the film shot near Leland in 1986?")  # doctest: +SKIP
    >>> hits[0].passage.metadata["title"]  # doctest: +SKIP
    'Leland, North Carolina'
    """
    one_torch_thread()
    docs = titled_documents(CORPUS)
    index_dir = index_root / content_id(*(part for d in docs for part in (d.id, d.text)))
    start = time.perf_counter()
    try:
        index = ClueIndex.load(index_dir)
        print(f"loaded the sample index from {index_dir} ({time.perf_counter() - start:.1f} s)")
    except IndexNotFoundError:
        logger.info("no sample index in %s yet: building it", index_dir)
        index = ClueIndex.from_documents(docs)
        index.persist(index_dir)
        took = time.perf_counter() - start
        print(f"indexed {len(docs)} sample documents in {took:.1f} s -> {index_dir}")
    return index.as_retriever(k, **overrides)


def sample_questions() -> list[dict[str, Any]]:
    """The bundled multi-hop questions (``question``, ``answer``, ``supporting_titles``).

    Examples
    --------
    >>> sample_questions()[0]["answer"]
    'Stephen King'
    """
    questions: list[dict[str, Any]] = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    return questions


def one_torch_thread() -> None:
    """Run torch on one thread: much faster on a small or shared CPU.

    Measured on 2 busy cores: SmolLM2 answering a 677-token RAG prompt (20 new tokens) takes
    4.9-5.6 s with one thread and 21-35 s with torch's default of two; indexing the sample
    corpus 25 s instead of 31 s.

    Examples
    --------
    >>> one_torch_thread()
    >>> import torch; torch.get_num_threads()
    1
    """
    import torch

    torch.set_num_threads(1)


def local_llm(max_new_tokens: int = 32) -> TransformersLLM:
    """The offline SmolLM2-135M-Instruct (loaded on first use), on one torch thread.

    Examples
    --------
    >>> local_llm().complete("What is the capital of France?").text  # doctest: +SKIP
    'The capital of France is Paris.'
    """
    one_torch_thread()
    return TransformersLLM(max_new_tokens=max_new_tokens)


def example_arguments(description: str) -> argparse.ArgumentParser:
    """The arguments of the examples answering the sample questions: ``--index-dir``, ``-k``
    and ``--questions``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--index-dir", type=Path, default=DEFAULT_INDEX_ROOT)
    parser.add_argument("-k", type=int, default=5, help="passages given to the LM")
    parser.add_argument("--questions", type=int, default=2, help="sample questions answered")
    return parser


def print_source(score: float, metadata: dict[str, Any], where: str = "") -> None:
    """A retrieved passage: its score, title (and ``where``), then its best Q-Iter path."""
    print(f"  [{score:.3f}] {metadata['title']}{where}")
    for line in describe_path(metadata["explanation"]):
        print("       " + line)
