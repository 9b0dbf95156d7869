"""The ``graphrag-integrations`` command: ``eval``, ``methods``, ``index``, ``query``, ``show``,
``train``.

Examples
--------
Evaluate two baselines on MuSiQue-100 and write the JSON summary::

    graphrag-integrations eval --method dense,bm25 --dataset ../shared/data/musique-100 \\
        --json results.json

List the methods, then one method's options (paper symbols, types, defaults, ranges)::

    graphrag-integrations methods
    graphrag-integrations methods clue

Build a BM25 index over a folder, then query it::

    graphrag-integrations index --method bm25 --input docs/ --out ./bm25-index
    graphrag-integrations query --index ./bm25-index "Who founded the company?" -k 3

``query`` and ``show`` take the method's query-time options (``methods NAME`` lists them),
validated before the index loads, e.g. QCG-RAG's hop count or KG-Translator's fusion::

    graphrag-integrations query --index ./qcg-index "Who founded it?" --option h=2
    graphrag-integrations query --index ./kgt-index "Who founded it?" --option kgt.fusion=rrf

``--out`` must be a new or empty folder; ``--overwrite`` writes into another folder (its files
are kept) or over an existing index (of any method).
``--checkpoint DIR`` builds in batches (``--checkpoint-every N`` documents) saved to ``DIR``: run
the same command again after a kill and it resumes where it stopped
(:mod:`~graphrag_integrations.core.checkpoint`).

Draw the subgraph that led to the top passages as a self-contained HTML page (opened in a
browser unless ``--no-open``; see :mod:`~graphrag_integrations.evaluation.show`)::

    graphrag-integrations show --index ./clue-index "Who founded the company?" --out q.html

Train a method's learned component (methods that register a trainer) and save it::

    graphrag-integrations train --method NAME --dataset DATA --out model-dir/ --option KEY=VALUE

Global options (before the command): ``--version``; ``-v/--verbose`` logs at INFO level and
lets the model libraries (transformers, sentence-transformers, huggingface_hub, torch) print
their progress bars and warnings, which are silenced otherwise
(:mod:`~graphrag_integrations.evaluation.noise`); ``-q/--quiet`` logs errors only and hides
progress bars; ``--threads N`` sets the intra-op threads of torch and BLAS (default: the
cores the load average leaves free, at least 1, or ``OMP_NUM_THREADS`` when set:
:mod:`~graphrag_integrations.core.threads`)::

    graphrag-integrations --threads 2 query --index ./kgt-index "Who founded it?"

Every error caused by bad input (unknown method or option, bad option value, missing dataset,
no index) prints one line ``error: ...`` on stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_integrations.core.params import key_values
from graphrag_integrations.errors import GraphRAGError

if TYPE_CHECKING:
    from graphrag_integrations.core.persistence import Manifest
    from graphrag_integrations.core.registry import MethodRegistration

logger = logging.getLogger(__name__)

EXIT_USAGE = 2


# -- argument parsing -------------------------------------------------------------------
def _int_list(value: str) -> list[int]:
    try:
        ks = [int(x) for x in value.split(",") if x.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {value!r}"
        ) from exc
    if not ks or min(ks) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {value!r}")
    return ks


def _methods(value: str) -> list[str]:
    names = [x.strip() for x in value.split(",") if x.strip()]
    if not names:
        raise argparse.ArgumentTypeError("no method given")
    return list(dict.fromkeys(names))


def _positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value!r}")
    return n


def version_text() -> str:
    """``--version``: the package version, then torch's and transformers' (read from their
    installed metadata: nothing is imported).

    Examples
    --------
    >>> version_text().splitlines()[0].startswith("graphrag-integrations ")
    True
    """
    from importlib.metadata import PackageNotFoundError, version

    from graphrag_integrations import __version__

    libs = []
    for dist in ("torch", "transformers"):
        try:
            libs.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            libs.append(f"{dist} (not installed)")
    return f"graphrag-integrations {__version__}\n{', '.join(libs)}"


class _VersionAction(argparse.Action):
    """``--version``: print :func:`version_text` (two lines) and exit."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(version_text())
        parser.exit()


def parse_options(items: Sequence[str]) -> dict[str, dict[str, str]]:
    """Parse ``METHOD.KEY=VALUE`` items into per-method option strings.

    Values stay strings: each method's registration converts them to its parameter types
    and rejects unknown names (:meth:`MethodRegistration.parse_options`).

    Examples
    --------
    >>> parse_options(["hybrid.weight=0.7", "hybrid.fusion=rrf"])
    {'hybrid': {'weight': '0.7', 'fusion': 'rrf'}}
    """
    out: dict[str, dict[str, str]] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        method, dot, name = key.partition(".")
        if not sep or not dot or not method or not name:
            raise GraphRAGError(f"option {item!r} is not METHOD.KEY=VALUE")
        if name in out.get(method, {}):
            raise GraphRAGError(f"option {key} is given twice")
        out.setdefault(method, {})[name] = raw
    return out


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``graphrag-integrations`` command."""
    parser = argparse.ArgumentParser(
        prog="graphrag-integrations",
        description="Graph-RAG retrievers: build indexes, query them, evaluate methods.",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the versions and exit")
    chatter = parser.add_mutually_exclusive_group()
    chatter.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="log at INFO level; show the model libraries' progress bars and warnings",
    )
    chatter.add_argument(
        "-q", "--quiet", action="store_true", help="log errors only; no progress bars"
    )
    parser.add_argument(
        "--threads",
        type=_positive_int,
        metavar="N",
        help="intra-op threads of torch and BLAS (default: OMP_NUM_THREADS if set, else the "
        "cores the load average leaves free, at least 1)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("eval", help="evaluate methods on a benchmark dataset")
    ev.add_argument("--method", required=True, type=_methods, help="comma-separated methods")
    ev.add_argument("--dataset", required=True, type=Path, help="dataset folder or questions file")
    ev.add_argument("--queries", type=Path, help="questions file replacing the dataset's")
    ev.add_argument("--distractors", type=Path, help="corpus appended as distractors")
    ev.add_argument("--limit", type=int, help="evaluate only the first N questions")
    ev.add_argument(
        "--hops",
        type=int,
        help="MetaQA: hop set, or hop count of --queries (default: its N-hop folder)",
    )
    ev.add_argument("--json", type=Path, help="write the JSON summary here")
    ev.add_argument("--k", type=_int_list, help="recall depths (default 2,5; LiHuaWorld: 5,10)")
    ev.add_argument("--embedding", help="embedding model name or path (default all-MiniLM-L6-v2)")
    ev.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="METHOD.KEY=VALUE",
        help="method option, e.g. hybrid.fusion=rrf (repeatable; see the methods command)",
    )
    ev.add_argument("--no-progress", action="store_true", help="no progress bars")
    ev.add_argument(  # LiHuaWorld only (evaluation.lihuaworld_run)
        "--chunking", help="LiHuaWorld chunking SIZE/OVERLAP in tokens (default 1200/100)"
    )
    ev.add_argument("--answer-llm", help="LiHuaWorld QA: answer LLM (model name or path)")
    ev.add_argument("--judge", help="LiHuaWorld QA: judge LLM (model name or path)")

    me = sub.add_parser("methods", help="list the methods, or one method's options")
    me.add_argument("name", nargs="?", help="a method: print its options")

    ix = sub.add_parser("index", help="build and persist a method's index")
    ix.add_argument("--method", required=True)
    ix.add_argument(
        "--input", required=True, nargs="+", type=Path, help="files, folders or dataset folders"
    )
    ix.add_argument("--out", required=True, type=Path, help="index directory to write")
    ix.add_argument("--embedding", help="embedding model name or path")
    ix.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="index-time option or named object of the method, e.g. alpha=0 (repeatable)",
    )
    ix.add_argument(
        "--overwrite",
        action="store_true",
        help="write into a non-empty folder that holds no index, or over an existing index "
        "(files the index did not write are kept)",
    )
    ix.add_argument(
        "--checkpoint",
        type=Path,
        metavar="DIR",
        help="build in batches saved to DIR; re-run the same command to resume after a kill",
    )
    ix.add_argument(
        "--checkpoint-every",
        type=int,
        metavar="N",
        help="documents per checkpointed batch (default 500; needs --checkpoint)",
    )
    ix.add_argument("--no-progress", action="store_true", help="no progress bars")

    tr = sub.add_parser("train", help="train a method's learned component and save it")
    tr.add_argument("--method", required=True)
    tr.add_argument("--dataset", required=True, type=Path, help="training data (file or folder)")
    tr.add_argument("--out", required=True, type=Path, help="directory to write the model to")
    tr.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="training option of the method (repeatable; see `methods NAME`)",
    )
    tr.add_argument("--no-progress", action="store_true", help="no progress bars")

    qu = sub.add_parser("query", help="query a persisted index")
    qu.add_argument("--index", required=True, type=Path, help="index directory")
    qu.add_argument("question", help="the query text")
    qu.add_argument("-k", type=int, help="number of passages, >= 1 (default: the index's own k)")
    qu.add_argument("--embedding", help="embedding model (default: the one in the manifest)")
    _add_query_option(qu)
    qu.add_argument("--json", action="store_true", help="print results as JSON")

    sh = sub.add_parser(
        "show", help="write an HTML picture of the subgraph behind a query's top passages"
    )
    sh.add_argument("--index", required=True, type=Path, help="index directory")
    sh.add_argument("question", help="the query text")
    sh.add_argument("--out", type=Path, help="HTML file to write (default: ./show-<hash>.html)")
    sh.add_argument(
        "-k", "--k", type=int, help="number of passages, >= 1 (default: the index's own k)"
    )
    sh.add_argument("--embedding", help="embedding model (default: the one in the manifest)")
    _add_query_option(sh)
    sh.add_argument("--no-open", action="store_true", help="do not open a browser")
    return parser


def _add_query_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="[METHOD.]KEY=VALUE",
        help="query-time option of the index's method, e.g. h=2 or kgt.fusion=rrf "
        "(repeatable; see `methods NAME`)",
    )


# -- commands ---------------------------------------------------------------------------
def cmd_eval(args: argparse.Namespace) -> int:
    """Run :func:`~graphrag_integrations.evaluation.harness.run_eval` and print the table."""
    from graphrag_integrations.evaluation.datasets import load_dataset
    from graphrag_integrations.evaluation.harness import run_eval
    from graphrag_integrations.evaluation.lihuaworld_run import is_lihuaworld
    from graphrag_integrations.evaluation.registry import get_registration
    from graphrag_integrations.evaluation.report import format_report

    options = parse_options(args.option)
    stray = sorted(set(options) - set(args.method))
    if stray:
        raise GraphRAGError(f"--option for {', '.join(stray)}, which --method does not list")
    for name in args.method:  # fail fast, before loading anything
        reg = get_registration(name)
        reg.parse_options(options.get(name, {}), cli=True)
        reg.resolve_builder()
    if is_lihuaworld(args.dataset):
        return _eval_lihuaworld(args, options)
    if args.chunking or args.answer_llm or args.judge:
        raise GraphRAGError("--chunking, --answer-llm and --judge apply to LiHuaWorld only")
    dataset = load_dataset(
        args.dataset,
        queries=args.queries,
        distractors=args.distractors,
        limit=args.limit,
        hops=args.hops,
    )
    report = run_eval(
        dataset,
        args.method,
        embedder=args.embedding,
        ks=args.k or [2, 5],
        options=options,
        show_progress=not args.no_progress,
    )
    print(format_report(report))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


def _eval_lihuaworld(args: argparse.Namespace, options: dict[str, dict[str, str]]) -> int:
    """``eval`` on LiHuaWorld: paper chunking, evidence Recall@K per type, judged QA."""
    from graphrag_integrations.evaluation.lihuaworld_run import (
        format_lihua_report,
        parse_chunking,
        run_lihuaworld_eval,
    )

    if args.distractors is not None:
        raise GraphRAGError("--distractors does not apply to LiHuaWorld")
    if bool(args.answer_llm) != bool(args.judge):
        raise GraphRAGError("judged QA needs both --answer-llm and --judge")
    chunking = parse_chunking(args.chunking or "1200/100")
    llm = judge = None
    if args.judge:
        from graphrag_integrations.core.llm import as_llm

        llm, judge = as_llm(args.answer_llm), as_llm(args.judge)
    report = run_lihuaworld_eval(
        args.dataset,
        args.method,
        queries=args.queries,
        chunking=chunking,
        embedder=args.embedding,
        ks=args.k or [5, 10],
        options=options,
        llm=llm,
        judge=judge,
        judge_name=args.judge,
        limit=args.limit,
        show_progress=not args.no_progress,
    )
    print(format_lihua_report(report))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(report.to_json(), indent=2, default=str) + "\n", encoding="utf-8"
        )
        print(f"wrote {args.json}")
    return 0


def cmd_methods(args: argparse.Namespace) -> int:
    """List the registered methods, or print one method's options."""
    from graphrag_integrations.evaluation.registry import (
        get_registration,
        load_errors,
        registrations,
    )

    if args.name:
        print(get_registration(args.name).describe())
        return 0
    regs = registrations()
    width = max(len(name) for name in regs)
    for name in sorted(regs):
        reg = regs[name]
        print(f"{name.ljust(width)}  {reg.description}  [inputs: {', '.join(sorted(reg.inputs))}]")
    for name, error in sorted(load_errors().items()):
        print(f"{name.ljust(width)}  (entry point failed to load: {error})")
    return 0


def _accepts(cls: type[Any], param: str) -> bool:
    for fn in (cls.__init__, getattr(cls, "from_passages", None)):
        if fn is not None and param in inspect.signature(fn).parameters:
            return True
    return False


def _input_documents(paths: Sequence[Path]) -> list[Any]:
    """Dataset folders/corpus files become one document per passage (LiHuaWorld: per chunk of
    the paper's 1,200 / 100 chunking, as ``eval`` cuts it); the rest stay paths."""
    from graphrag_integrations.core.documents import SourceDocument
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
    return message.replace("pass overwrite=True", "pass --overwrite")


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


def cmd_train(args: argparse.Namespace) -> int:
    """Run ``--method``'s trainer on ``--dataset``, write to ``--out``, print its report."""
    from graphrag_integrations.evaluation.registry import get_registration, registrations

    reg = get_registration(args.method)
    if reg.trainer is None:
        trainable = sorted(n for n, r in registrations().items() if r.trainer is not None)
        raise GraphRAGError(
            f"method {reg.name!r} has nothing to train; methods with a trainer: "
            f"{', '.join(trainable) or '(none)'}"
        )
    params = reg.train_params.from_options(key_values(args.option), prefix=f"{reg.name}.")
    if not args.dataset.exists():
        raise GraphRAGError(f"dataset {args.dataset} does not exist")
    trainer = reg.resolve_trainer()
    report = trainer(args.dataset, args.out, params=params, show_progress=not args.no_progress)
    print(json.dumps(dict(report), indent=2, default=str))
    return 0


def _read_manifest(path: Path) -> Manifest:
    """The manifest of the index in ``path`` (validated; the index's ``load`` verifies the
    checksums of its files)."""
    from graphrag_integrations.core.persistence import read_manifest

    return read_manifest(path, verify=False)


def query_options(reg: MethodRegistration, items: Sequence[str]) -> dict[str, Any]:
    """Validate ``query --option`` items against ``reg``'s query parameters: typed overrides.

    An item is ``KEY=VALUE`` or ``METHOD.KEY=VALUE`` (``METHOD`` must be the index's); a
    ``preset`` expands to every field of that query preset, other keys override it. The
    overrides come in the order of the parameter class.

    Raises
    ------
    GraphRAGError
        One line: a malformed item, another method's option, an index-time option, an unknown
        name (listing the valid ones) or a bad value.

    Examples
    --------
    >>> from graphrag_integrations.evaluation.registry import get_registration
    >>> query_options(get_registration("hybrid"), ["fusion=rrf", "hybrid.weight=0.7"])
    {'weight': 0.7, 'fusion': 'rrf'}
    >>> query_options(get_registration("hybrid"), ["bm25.k=3"])
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.GraphRAGError: option bm25.k: this index is hybrid, not bm25
    """
    from graphrag_integrations.core.params import PRESET_OPTION

    given: dict[str, str] = {}
    for key, raw in key_values(items).items():
        method, dot, name = key.rpartition(".")
        if dot and method != reg.name:
            raise GraphRAGError(f"option {key}: this index is {reg.name}, not {method}")
        if name in given:
            raise GraphRAGError(f"option {name} is given twice")
        given[name] = raw
    cls = reg.query_params
    index_only = set(reg.index_params.names()) - set(cls.names())
    for name in given:
        if name in index_only:
            raise GraphRAGError(
                f"option {reg.name}.{name} is an index-time option (set when the index is "
                "built); query and show take query-time options"
            )
    params = cls.from_options(given, prefix=f"{reg.name}.")
    names = set(given) - {PRESET_OPTION}
    if PRESET_OPTION in given:
        names = set(cls.names()) - {PRESET_OPTION}
    return {name: getattr(params, name) for name in cls.names() if name in names}


def _takes(fn: Any, name: str) -> bool:
    """Whether ``fn`` accepts the keyword ``name`` (explicitly or through ``**kwargs``)."""
    params = inspect.signature(fn).parameters
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _load_index(
    path: Path, embedding: str | None, options: Sequence[str] = ()
) -> tuple[Any, Any, Manifest]:
    """Load the index in ``path`` with its registered class (and the manifest's embedder):
    ``(index, retriever, manifest)``, the retriever bound to the query ``options`` (validated
    first; without options it is the index itself).

    Indexes with ``as_retriever(**overrides)`` are loaded as persisted and then bound; other
    index classes get the overrides at load (their ``query_params`` object updated, or the
    loader's keywords).
    """
    from dataclasses import replace

    from graphrag_integrations.evaluation.registry import get_registration

    manifest = _read_manifest(path)
    reg = get_registration(manifest.method)
    overrides = query_options(reg, options)  # before the (slow) load
    cls = reg.resolve_index_class()
    kwargs: dict[str, Any] = {}
    if _accepts(cls, "embedding"):
        kwargs["embedding"] = embedding or manifest.embedding_model
    bind = overrides and callable(getattr(cls, "as_retriever", None))
    if overrides and not bind:  # indexes without as_retriever: the options go to the loader
        if _accepts(cls, "query_params"):
            recorded = manifest.parameters.get("query", {})
            kwargs["query_params"] = replace(reg.query_params.from_options(recorded), **overrides)
        else:
            refused = sorted(n for n in overrides if not _takes(cls.__init__, n))
            if refused:
                raise GraphRAGError(f"{cls.__name__} cannot take {', '.join(refused)} when loaded")
            kwargs.update(overrides)
    index = cls.load(path, **kwargs)
    return index, (index.as_retriever(**overrides) if bind else index), manifest


def cmd_query(args: argparse.Namespace) -> int:
    """Load the index in ``--index`` and print the top ``-k`` passages for the question."""
    from graphrag_integrations.core.validation import check_k

    k = None if args.k is None else check_k(args.k)  # before loading anything
    _, retriever, _ = _load_index(args.index, args.embedding, args.option)
    results = retriever.retrieve(args.question, k=k)
    if args.json:
        rows = [
            {"rank": i, "score": r.score, "text": r.text, **r.to_metadata()}
            for i, r in enumerate(results, 1)
        ]
        print(json.dumps(rows, indent=2))
        return 0
    for i, r in enumerate(results, 1):
        title = r.passage.metadata.get("title") or r.passage.doc_id
        print(f"[{i}] score={r.score:.4f}  {title}  (passage {r.passage.id})")
        print("    " + " ".join(r.text.split())[:300])
        print(f"    explanation: {json.dumps(dict(r.explanation), default=str)}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """Write the HTML picture of ``question`` on ``--index`` and open it unless ``--no-open``."""
    import hashlib
    import webbrowser

    from graphrag_integrations.core.index_base import check_query
    from graphrag_integrations.core.validation import check_k
    from graphrag_integrations.evaluation.show import render_html, retrieval_subgraph

    k = None if args.k is None else check_k(args.k)
    question = check_query(args.question)
    out = args.out or Path(f"show-{hashlib.sha256(question.encode()).hexdigest()[:8]}.html")
    if out.is_dir():
        raise GraphRAGError(f"--out {out} is a folder: pass an .html file name")
    index, retriever, manifest = _load_index(args.index, args.embedding, args.option)
    results = retriever.retrieve(question, k=k)
    explain = getattr(index, "explanation_scores", None)  # node scores, where a method has them
    graph = retrieval_subgraph(question, results, explain(question, results) if explain else None)
    info = {"index": args.index, "method": manifest.method, "k": k or len(results)}
    page = render_html(question, results, graph=graph, index_info=info)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    print(f"wrote {out} ({len(results)} passages)")
    if not args.no_open:
        try:
            opened = webbrowser.open(out.resolve().as_uri())
        except Exception as exc:  # a broken browser setup must not fail the command
            logger.warning("could not open a browser: %s", exc)
            opened = False
        if not opened:
            print(f"no browser opened; open {out} yourself")
    return 0


def _quiet_third_party(record: logging.LogRecord) -> bool:
    """Drop sub-WARNING records of ``bm25s``, which forces its logger to DEBUG on import."""
    return record.levelno >= logging.WARNING or not record.name.startswith("bm25s")


_COMMANDS = {
    "eval": cmd_eval,
    "methods": cmd_methods,
    "index": cmd_index,
    "query": cmd_query,
    "show": cmd_show,
    "train": cmd_train,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``graphrag-integrations`` console script.

    Returns
    -------
    int
        0 on success, 2 on bad input (the message is printed on stderr).

    Examples
    --------
    >>> main(["eval", "--method", "bm25", "--dataset", "x", "--option", "bm25.kk=3"])
    2
    >>> main(["methods", "bm25"])
    bm25: lexical BM25 (bm25s)
    inputs: passages
    <BLANKLINE>
    index options:
    (no options)
    <BLANKLINE>
    query options:
    option  symbol  type       default  range  description
    k               int        5        >= 1   passages returned when retrieve gets no k
    preset          'default'  -               named preset (explicit options win)
    0
    """
    args = build_parser().parse_args(argv)
    level = logging.INFO if args.verbose else logging.ERROR if args.quiet else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if not args.verbose:
        from graphrag_integrations.evaluation.noise import silence_library_noise

        silence_library_noise()
        for handler in logging.getLogger().handlers:
            handler.addFilter(_quiet_third_party)
    if args.quiet and hasattr(args, "no_progress"):
        args.no_progress = True
    try:
        from graphrag_integrations.core.threads import apply_thread_limit

        apply_thread_limit(args.threads)
        return _COMMANDS[args.command](args)
    except (GraphRAGError, FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
