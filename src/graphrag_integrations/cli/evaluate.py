"""The ``eval`` command: methods on a benchmark dataset (LiHuaWorld: its own run)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from graphrag_integrations.cli.graph_stores import eval_graph_stores
from graphrag_integrations.cli.options import parse_options
from graphrag_integrations.errors import GraphRAGError


def cmd_eval(args: argparse.Namespace) -> int:
    """Run :func:`~graphrag_integrations.evaluation.harness.run_eval` and print the table."""
    from graphrag_integrations.evaluation.datasets import load_dataset
    from graphrag_integrations.evaluation.harness import run_eval
    from graphrag_integrations.evaluation.lihuaworld_run import is_lihuaworld
    from graphrag_integrations.evaluation.registry import get_registration
    from graphrag_integrations.evaluation.report import format_report

    options: dict[str, dict[str, Any]] = dict(parse_options(args.option))
    stray = sorted(set(options) - set(args.method))
    if stray:
        raise GraphRAGError(f"--option for {', '.join(stray)}, which --method does not list")
    regs = [get_registration(name) for name in args.method]
    for reg in regs:  # fail fast, before loading anything
        reg.parse_options(options.get(reg.name, {}), cli=True)
        reg.resolve_builder()
    if args.graph_store is not None:  # each graph method: a graph of its own on that server
        used = eval_graph_stores(
            args.graph_store, regs, args.dataset, options, overwrite=args.overwrite
        )
        for name, url in used.items():
            print(f"{name}: graph in {url}")
    elif args.overwrite:
        raise GraphRAGError("--overwrite applies to the graphs of --graph-store only")
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


def _eval_lihuaworld(args: argparse.Namespace, options: dict[str, dict[str, Any]]) -> int:
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
