"""The C heap of the process: hand freed memory back to the operating system."""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)


def release_free_heap() -> bool:
    """Hand the C heap's free memory back to the operating system (glibc ``malloc_trim``).

    Loading an index parses large JSON files whose many small temporaries are freed but stay
    in the process's heap; trimming lowers the resident size without changing any object.
    A no-op (returning ``False``) where the C library has no ``malloc_trim`` (not glibc).

    Examples
    --------
    >>> release_free_heap() in (True, False)
    True
    """
    import ctypes
    import ctypes.util

    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        name = ctypes.util.find_library("c")
        try:
            _MALLOC_TRIM = ctypes.CDLL(name).malloc_trim if name else False
        except (OSError, AttributeError):
            _MALLOC_TRIM = False
        if not _MALLOC_TRIM:
            logger.debug("no malloc_trim in this C library: freed heap is not trimmed")
    if _MALLOC_TRIM is False:
        return False
    _MALLOC_TRIM(0)
    return True


_MALLOC_TRIM: Any = None
