"""Silence the model libraries' own console output: progress bars, logs and warnings.

transformers prints a "Loading weights" bar for every model it loads, huggingface_hub bars
for its downloads and cache reads, and these libraries and torch emit ``FutureWarning`` /
``UserWarning`` lines meant for the developers who call them, not for someone running a
command. :func:`silence_library_noise` turns all of that off in one place (the CLI calls it
at start unless ``--verbose``; benchmarks may too). Our own progress bars
(:mod:`graphrag_integrations.core.progress`) and log records are untouched.

It works whether or not the libraries are imported yet: environment variables for the ones
that read them at import (``HF_HUB_DISABLE_PROGRESS_BARS``, ``TRANSFORMERS_VERBOSITY``), their
APIs for the ones already loaded, logger levels and ``warnings`` filters for the rest.

Examples
--------
>>> import logging
>>> env = {}
>>> silence_library_noise(environ=env)
>>> env["HF_HUB_DISABLE_PROGRESS_BARS"], env["TRANSFORMERS_VERBOSITY"]
('1', 'error')
>>> logging.getLogger("transformers").level == logging.ERROR
True
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import MutableMapping

__all__ = ["NOISY_LIBRARIES", "silence_library_noise"]

#: Top-level modules whose progress bars, INFO/WARNING logs and warnings are silenced.
NOISY_LIBRARIES = (
    "transformers",
    "sentence_transformers",
    "huggingface_hub",
    "torch",
    "tokenizers",
    "accelerate",
)
_MODULES = r"(" + "|".join(NOISY_LIBRARIES) + r")(\..*)?$"


def silence_library_noise(*, environ: MutableMapping[str, str] | None = None) -> None:
    """Turn off the model libraries' progress bars, logs below ERROR and their warnings.

    Parameters
    ----------
    environ : mutable mapping, optional
        Environment to set the libraries' variables in (default ``os.environ``); values the
        user already set are kept.

    Notes
    -----
    ``FutureWarning`` is ignored whatever module it is attributed to: libraries raise it with
    a ``stacklevel`` that names their caller, and it addresses the caller's developer, not a
    command-line user. ``UserWarning`` and ``DeprecationWarning`` are ignored only when
    attributed to a module of :data:`NOISY_LIBRARIES`.
    """
    env = os.environ if environ is None else environ
    env.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    env.setdefault("TRANSFORMERS_VERBOSITY", "error")
    env.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    for name in NOISY_LIBRARIES:
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning)
    for category in (UserWarning, DeprecationWarning):
        warnings.filterwarnings("ignore", category=category, module=_MODULES)
    hub = sys.modules.get("huggingface_hub")
    if hub is not None:  # imported already: the variable came too late
        hub.utils.disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
