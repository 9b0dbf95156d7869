"""Building the committed QCG query sets: resumable Doc2Query generation, then snapshots.

QCG-RAG indexes generated (query, answer) pairs per chunk; the package ships the sets of two
benchmark corpora in ``graphrag_integrations/data/qcg/`` (``hotpotqa100.jsonl.gz``,
``lihuaworld.jsonl.gz``) so that ``eval --method qcg`` needs no generation. This tool makes
them with the offline SmolLM2-135M-Instruct (greedy, 1 torch thread, ``SMALL_MODEL_PROMPT``)::

    python -m graphrag_integrations.evaluation.qcg_query_sets generate hotpotqa-100 \\
        [--start 0] [--end 100] [--out runs/qcg/hotpotqa100.jsonl.gz] [--seed SET ...]
    python -m graphrag_integrations.evaluation.qcg_query_sets generate lihuaworld \\
        [--start 0] [--end N] [--chunking 1200/100] [--out runs/qcg/lihua.jsonl.gz]
    python -m graphrag_integrations.evaluation.qcg_query_sets snapshot hotpotqa-100 SET ... \\
        [--usage-log LOG ...] [--out src/graphrag_integrations/data/qcg/hotpotqa100.jsonl.gz]
    python -m graphrag_integrations.evaluation.qcg_query_sets snapshot lihuaworld SET ...

``--data`` (default ``../shared/data``) holds ``hotpotqa-100/`` and ``lihuaworld/``.

``generate`` is resumable and can run in parallel processes on disjoint ``--start`` /
``--end`` ranges (HotpotQA-100: questions in file order; LiHuaWorld: chats in time order):
each group's chunks the output set lacks go to the generator in batches, then the set is
rewritten with what it now covers completely (``extra["questions_done"]`` /
``extra["chats_done"]``), so any prefix of a run is a closed sub-corpus an evaluation can
use. A rerun, or a run seeded with ``--seed`` sets, skips what is done; the SQLite cache
(``--cache``) keeps every finished batch across crashes. One JSON row per batch is printed
(tokens, seconds, tokens/s); ``--usage-log`` files of those rows give ``snapshot`` the total
cost of the set.

``snapshot`` merges the per-process sets into the committed artefact and writes the covered
questions (HotpotQA: a questions file for ``eval``; LiHuaWorld: the dev questions whose
evidence chats are all covered, for ``eval --queries``).

Modules: ``hotpotqa`` and ``lihuaworld`` (generation and snapshot of each corpus), ``usage``
(cost accounting they share); ``__main__`` is the command line.
"""

from __future__ import annotations

from graphrag_integrations.evaluation.qcg_query_sets.hotpotqa import (
    generate_hotpotqa,
    snapshot_hotpotqa,
)
from graphrag_integrations.evaluation.qcg_query_sets.lihuaworld import (
    generate_lihuaworld,
    lihuaworld_chunks,
    snapshot_lihuaworld,
)
from graphrag_integrations.evaluation.qcg_query_sets.usage import (
    logged_usage,
    pair_counts,
    usage_rates,
)

__all__ = [
    "generate_hotpotqa",
    "generate_lihuaworld",
    "lihuaworld_chunks",
    "logged_usage",
    "pair_counts",
    "snapshot_hotpotqa",
    "snapshot_lihuaworld",
    "usage_rates",
]
