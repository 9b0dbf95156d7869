"""The commands about the registered methods themselves: ``methods`` (list them, or one
method's options) and ``train`` (a method's learned component)."""

from __future__ import annotations

import argparse
import json

from graphrag_integrations.core.params import key_values
from graphrag_integrations.errors import GraphRAGError


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
