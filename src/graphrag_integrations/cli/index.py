"""The ``index`` command: build a method's index from files, folders or datasets and
persist it (``--out`` checked before the build)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graphrag_integrations.cli.graph_stores import OPTION as GRAPH_STORE
from graphrag_integrations.cli.graph_stores import (
    check_single,
    index_graph_store,
    takes_graph_store,
)
from graphrag_integrations.cli.options import _accepts
from graphrag_integrations.core.params import key_values
from graphrag_integrations.errors import GraphRAGError


def _input_documents(paths: Sequence[Path]) -> list[Any]:
    """Dataset folders/corpus files become one document per passage (LiHuaWorld: per chunk of
    the paper's 1,200 / 100 chunking, as ``eval`` cuts it); the rest stay paths."""
    from graphrag_integrations.core.text.documents import SourceDocument
    from graphrag_integrations.evaluation.datasets import load_corpus, load_dataset
    from graphrag_integrations.evaluation.lihuaworld import chunk_lihuaworld, load_chat_documents
    from graphrag_integrations.evaluation.lihuaworld_run import is_lihuaworld

    docs: list[Any] = []
    for path in paths:
        if not path.exists():
            raise GraphRAGError(f"input {path} does not exist")
        passages = None
        if is_lihuaworld(path):  # the chunks `eval` uses (paper: 1,200 / 100 tokens)
            passages = chunk_lihuaworld(load_chat_documents(path))
        elif path.is_dir() and (path / "corpus.json").is_file():
            passages = load_corpus(path)
        elif path.is_dir() and any(
            (path / f).is_file() for f in ("questions.json", "LiHuaWorld.zip")
        ):
            passages = load_dataset(path).passages
        if passages is None:
            docs.append(path)
        else:
            docs.extend(SourceDocument(p.text, p.id, dict(p.metadata)) for p in passages)
    return docs


def _executor_option(args: argparse.Namespace) -> dict[str, Any]:
    """``executor=`` of ``from_documents`` for ``--executor`` / ``--workers`` (none: local)."""
    executor = getattr(args, "executor", "local")
    workers = getattr(args, "workers", None)
    if workers is not None and executor != "ray":
        raise GraphRAGError("--workers needs --executor ray")
    if workers is not None and workers < 1:
        raise GraphRAGError(f"--workers must be >= 1, got {workers}")
    if executor == "local":
        return {}
    from graphrag_integrations.core.index.executors import RayExecutor

    try:
        return {"executor": RayExecutor(num_workers=workers)}
    except ImportError as exc:  # ray missing: the message says how to install it
        raise GraphRAGError(str(exc)) from None


class _Refusal(Exception):
    """Leaves the probing ``atomic_directory`` block of :func:`_check_target`."""


def _check_target(out: Path, method: str, overwrite: bool) -> None:
    """Refuse ``--out`` now, as ``persist`` would after the build (nothing is written).

    Raises
    ------
    IndexExistsError
        If ``out`` is a non-empty folder that holds no index, or an index (the build makes
        a new one, with a new index id), and ``overwrite`` is false; the message names
        ``--overwrite``.
    """
    import uuid

    from graphrag_integrations.core.persistence import atomic_directory
    from graphrag_integrations.errors import IndexExistsError

    if out.exists() and not out.is_dir():
        raise IndexExistsError(f"--out {out} is a file, not a folder: pass a folder for the index")
    try:
        with atomic_directory(out, overwrite=overwrite, method=method, index_id=uuid.uuid4().hex):
            raise _Refusal  # an empty block that fails: the target keeps its contents
    except _Refusal:
        pass
    except IndexExistsError as exc:
        raise IndexExistsError(_cli_wording(str(exc))) from exc


def _cli_wording(message: str) -> str:
    return message.replace("pass overwrite=True / --overwrite", "pass --overwrite").replace(
        "pass overwrite=True", "pass --overwrite"
    )


def cmd_index(args: argparse.Namespace) -> int:
    """Build ``--method``'s index from ``--input`` and persist it to ``--out``.

    ``--out`` is checked before the build: a non-empty folder that holds no index, or an
    existing index, is refused without ``--overwrite`` (files the index did not write are
    kept either way).
    """
    from graphrag_integrations.core.params import PRESET_OPTION
    from graphrag_integrations.errors import IndexExistsError
    from graphrag_integrations.evaluation.registry import get_registration

    reg = get_registration(args.method)
    given = key_values(args.option)
    query_only = set(reg.query_params.names()) - set(reg.index_params.names())
    for key in given:
        if key in query_only:
            raise GraphRAGError(
                f"option {reg.name}.{key} is a query-time option; index takes index-time "
                "options and named objects"
            )
    opts = reg.parse_options(given, cli=True)
    cls = reg.resolve_index_class()
    _check_target(args.out, cls.method, args.overwrite)
    kwargs: dict[str, Any]
    if _accepts(cls, "index_params") and set(given) - set(opts.objects) == {PRESET_OPTION}:
        kwargs = {PRESET_OPTION: given[PRESET_OPTION]}  # recorded by name where the index does
    elif _accepts(cls, "index_params"):  # the API contract: params objects (a preset applied)
        kwargs = {"index_params": opts.index_params, "query_params": opts.query_params}
    else:  # an index taking its options as keywords (third-party)
        kwargs = opts.index_params.to_kwargs()
        if PRESET_OPTION in given and _accepts(cls, PRESET_OPTION):
            kwargs[PRESET_OPTION] = given[PRESET_OPTION]
    for name, value in opts.objects.items():  # named objects: model names, paths
        if not _accepts(cls, name):
            raise GraphRAGError(f"option {reg.name}.{name} is not an option of {cls.__name__}")
        kwargs[name] = value
    if args.graph_store is not None:
        if not takes_graph_store(reg):
            raise GraphRAGError(f"--graph-store: {reg.name} keeps no graph")
        check_single(kwargs, "")
        kwargs[GRAPH_STORE] = args.graph_store
    if isinstance(kwargs.get(GRAPH_STORE), str):  # checked now; --overwrite replaces its data
        kwargs[GRAPH_STORE] = index_graph_store(kwargs[GRAPH_STORE], overwrite=args.overwrite)
    docs = _input_documents(args.input)
    if _accepts(cls, "embedding"):
        kwargs["embedding"] = args.embedding
    if _accepts(cls, "show_progress"):  # None: bars for big builds (core.progress)
        kwargs["show_progress"] = False if args.no_progress else None
    if args.checkpoint_every is not None and args.checkpoint is None:
        raise GraphRAGError("--checkpoint-every needs --checkpoint DIR")
    if args.checkpoint is not None:
        kwargs["checkpoint_dir"] = args.checkpoint
        kwargs["checkpoint_every"] = args.checkpoint_every
    kwargs.update(_executor_option(args))
    index = cls.from_documents(docs, **kwargs)
    try:
        index.persist(args.out, overwrite=args.overwrite)
    except IndexExistsError as exc:  # the folder changed during the build
        raise IndexExistsError(_cli_wording(str(exc))) from exc
    print(
        f"indexed {len(getattr(index, 'passages', []))} passages with {args.method} -> {args.out}"
    )
    report = getattr(index, "generation_report", None)
    if callable(report):  # methods that call an LLM while indexing (QCG-RAG): tokens, counts
        print(json.dumps(report(), default=str))
    if (args.out / "query_set.jsonl.gz").is_file():  # QCG-RAG: the generated pairs, reusable
        print(f"generated query set reused by: eval --option {args.method}.query_set={args.out}")
    return 0
