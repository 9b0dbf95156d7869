"""The ``graphrag-integrations`` command: ``eval``, ``methods``, ``index``, ``query``, ``show``,
``train``, ``serve``.

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
(:mod:`~graphrag_integrations.core.index.checkpoint`).

A graph method can keep its graph in FalkorDB: ``--graph-store falkordb://HOST:PORT/GRAPH`` on
``index`` (with ``--overwrite``: replace what that graph holds), ``query`` / ``show`` (where
the graph is now) and ``eval`` (one graph per method, ``GRAPH_<method>_<dataset>``; see
:mod:`~graphrag_integrations.cli.graph_stores`)::

    graphrag-integrations index --method clue --input docs/ --out ./clue-index \
        --graph-store falkordb://127.0.0.1:6379/docs

Draw the subgraph that led to the top passages as a self-contained HTML page (opened in a
browser unless ``--no-open``; see :mod:`~graphrag_integrations.evaluation.show`)::

    graphrag-integrations show --index ./clue-index "Who founded the company?" --out q.html

Train a method's learned component (methods that register a trainer) and save it::

    graphrag-integrations train --method NAME --dataset DATA --out model-dir/ --option KEY=VALUE

Serve persisted indexes as MCP tools, one search tool per index, for any agent that speaks
the Model Context Protocol (needs the ``[mcp]`` extra; stdio by default, streamable HTTP with
``--http``; read-only unless ``--allow-writes``; see :mod:`~graphrag_integrations.cli.serve`)::

    graphrag-integrations serve --index ./clue-index --index ./bm25-index
    graphrag-integrations serve --index ./clue-index --http --port 8000

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

from graphrag_integrations.cli.entry import EXIT_USAGE, _quiet_third_party, main
from graphrag_integrations.cli.evaluate import cmd_eval
from graphrag_integrations.cli.index import _check_target, cmd_index
from graphrag_integrations.cli.methods import cmd_methods, cmd_train
from graphrag_integrations.cli.options import parse_options, query_options
from graphrag_integrations.cli.parser import build_parser, version_text
from graphrag_integrations.cli.query import cmd_query, cmd_show
from graphrag_integrations.cli.serve import cmd_serve

__all__ = [
    "EXIT_USAGE",
    "_check_target",
    "_quiet_third_party",
    "build_parser",
    "cmd_eval",
    "cmd_index",
    "cmd_methods",
    "cmd_query",
    "cmd_serve",
    "cmd_show",
    "cmd_train",
    "main",
    "parse_options",
    "query_options",
    "version_text",
]
