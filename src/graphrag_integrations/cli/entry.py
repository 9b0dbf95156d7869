"""The entry point of the ``graphrag-integrations`` console script: :func:`main` (logging,
library noise, threads, then the command; bad input: one ``error:`` line, exit 2)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from graphrag_integrations.cli.evaluate import cmd_eval
from graphrag_integrations.cli.index import _cli_wording, cmd_index
from graphrag_integrations.cli.methods import cmd_methods, cmd_train
from graphrag_integrations.cli.parser import build_parser
from graphrag_integrations.cli.query import cmd_query, cmd_show
from graphrag_integrations.cli.serve import cmd_serve
from graphrag_integrations.errors import GraphRAGError, IndexExistsError

EXIT_USAGE = 2


def _quiet_third_party(record: logging.LogRecord) -> bool:
    """Drop sub-WARNING records of ``bm25s``, which forces its logger to DEBUG on import."""
    return record.levelno >= logging.WARNING or not record.name.startswith("bm25s")


_COMMANDS = {
    "eval": cmd_eval,
    "methods": cmd_methods,
    "index": cmd_index,
    "query": cmd_query,
    "show": cmd_show,
    "serve": cmd_serve,
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
    except (GraphRAGError, FileNotFoundError, ValueError, ConnectionError) as exc:
        message = _cli_wording(str(exc)) if isinstance(exc, IndexExistsError) else str(exc)
        print(f"error: {message}", file=sys.stderr)
        return EXIT_USAGE
