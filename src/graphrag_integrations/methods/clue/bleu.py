"""BLEU of every chunk against the rest of the corpus, without pairwise work.

Clue-RAG's chunk selection (Algorithm 2, line 6) scores chunk ``t_i`` by
``BLEU(t_i, T \\ {t_i})``: the chunk is the hypothesis and *every other chunk* is a reference.
Standard multi-reference sentence BLEU (Papineni et al., 2002) needs, per hypothesis n-gram,
the largest count of that n-gram in any single reference, and the reference length closest
to the hypothesis length. Done naively that is ``O(N^2)`` chunk pairs. Here each chunk's
n-grams are counted once and, per n-gram, only the two largest counts across the corpus (and
which chunk holds the largest) are kept, so "max count over the *other* chunks" is one
lookup; the closest other length comes from a sorted length array and :mod:`bisect`.

The score is numerically identical to ``sacrebleu.sentence_bleu(chunk, others,
smooth_method="floor", lowercase=True, tokenize="13a")`` (effective order on, floor value
0.1, scale 0-100); a property test checks this.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["bleu_against_rest", "ngram_counts", "tokenize_13a"]

# mteval-v13a tokenisation rules (the WMT standard, also used by sacrebleu's "13a").
# ASCII symbols split off everywhere: every printable ASCII punctuation except ' , - .
_SYMBOLS = str.maketrans({c: f" {c} " for c in ' !"#$%&()*+/:;<=>?@[\\]^_`{|}~'})
_PUNCT_AFTER_NON_DIGIT = re.compile(r"([^0-9])([.,])")
_PUNCT_BEFORE_NON_DIGIT = re.compile(r"([.,])([^0-9])")
_DASH_AFTER_DIGIT = re.compile(r"([0-9])(-)")
_ENTITIES = (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"))


def tokenize_13a(text: str, *, lowercase: bool = True) -> list[str]:
    """Tokenise like mteval-v13a (sacrebleu ``tokenize="13a"``).

    Parameters
    ----------
    text : str
        Raw text.
    lowercase : bool
        Lower-case before tokenising (sacrebleu ``lowercase=True``).

    Returns
    -------
    list of str
        The tokens.

    Examples
    --------
    >>> tokenize_13a("It costs $3.50, (roughly).")
    ['it', 'costs', '$', '3.50', ',', '(', 'roughly', ')', '.']
    """
    if lowercase:
        text = text.lower()
    line = text.rstrip()
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        for entity, char in _ENTITIES:
            line = line.replace(entity, char)
    line = f" {line} "
    line = line.translate(_SYMBOLS)
    line = _PUNCT_AFTER_NON_DIGIT.sub(r"\1 \2 ", line)
    line = _PUNCT_BEFORE_NON_DIGIT.sub(r" \1 \2", line)
    line = _DASH_AFTER_DIGIT.sub(r"\1 \2 ", line)
    return line.split()


def ngram_counts(tokens: Sequence[str], max_order: int = 4) -> list[Counter[tuple[str, ...]]]:
    """Count the n-grams of ``tokens``, one counter per order ``n = 1..max_order``.

    Examples
    --------
    >>> unigrams, bigrams = ngram_counts(["a", "b", "a"], 2)
    >>> unigrams[("a",)], bigrams[("a", "b")]
    (2, 1)
    """
    # shifted copies of different lengths: zip stops at the shortest (the last n-gram)
    return [
        Counter(zip(*(tokens[k:] for k in range(n)), strict=False)) for n in range(1, max_order + 1)
    ]


def _closest_other_length(sorted_lengths: Sequence[int], length: int) -> int:
    """Closest length in ``sorted_lengths`` after removing one occurrence of ``length``.

    Ties go to the shorter length, as in sacrebleu.
    """
    lo = bisect.bisect_left(sorted_lengths, length)
    hi = bisect.bisect_right(sorted_lengths, length)
    if hi - lo >= 2:  # another chunk has exactly this length
        return length
    below = sorted_lengths[lo - 1] if lo > 0 else None
    above = sorted_lengths[hi] if hi < len(sorted_lengths) else None
    if below is None:
        assert above is not None
        return above
    if above is None or length - below <= above - length:
        return below
    return above


def _sentence_score(
    correct: Sequence[int],
    total: Sequence[int],
    hyp_len: int,
    ref_len: int,
    smooth_value: float,
) -> float:
    """Sentence BLEU from its sufficient statistics: floor smoothing, effective order."""
    if not any(correct):
        return 0.0
    brevity = 1.0
    if hyp_len < ref_len:
        brevity = math.exp(1 - ref_len / hyp_len) if hyp_len > 0 else 0.0
    log_sum = 0.0
    order = 0
    for matched, count in zip(correct, total, strict=True):
        if count == 0:
            break
        order += 1
        precision = 100.0 * (matched if matched else smooth_value) / count
        log_sum += math.log(precision)
    return brevity * math.exp(log_sum / order)


def bleu_against_rest(
    texts: Sequence[str],
    *,
    max_order: int = 4,
    smooth_value: float = 0.1,
    lowercase: bool = True,
) -> list[float]:
    """Sentence BLEU of each text against all the other texts as references.

    Hypothesis ``texts[i]``, references ``texts[:i] + texts[i+1:]``; clipped n-gram counts
    ``min(hyp count, max count in any one reference)`` for ``n = 1..max_order``, geometric
    mean of the precisions over the orders the hypothesis is long enough for (sacrebleu's
    effective order), floor smoothing of zero precisions (``smooth_value / total``), and the
    brevity penalty with the reference length closest to the hypothesis length (ties: the
    shorter). Scale 0-100, as sacrebleu.

    Complexity: ``O(G + N log N)`` time and ``O(G)`` memory for ``N`` texts holding ``G``
    n-gram occurrences in total (tokenising and counting once, one pass keeping the two
    largest counts per distinct n-gram, one pass scoring, a sort of the lengths and a
    bisect per text), instead of ``O(N * G)`` for scoring each text against the others.
    Measured: the 1,890 MuSiQue passages (title + text, 172k tokens) take 1.7 s of CPU.

    Parameters
    ----------
    texts : sequence of str
        The corpus chunks.
    max_order : int
        Largest n-gram order (BLEU-4 by default).
    smooth_value : float
        Floor smoothing value (sacrebleu default 0.1).
    lowercase : bool
        Lower-case before tokenising.

    Returns
    -------
    list of float
        One score per text, in ``[0, 100]``. A corpus of one text has no references:
        its score is defined as ``0.0``.

    Raises
    ------
    ValueError
        If ``max_order < 1`` or ``smooth_value <= 0``.

    Examples
    --------
    >>> scores = bleu_against_rest(["the cat sat on the mat", "the cat sat on a mat", "dogs"])
    >>> [round(s, 2) for s in scores]
    [53.73, 53.73, 0.0]
    """
    if max_order < 1:
        raise ValueError(f"max_order must be >= 1, got {max_order}")
    if not smooth_value > 0:
        raise ValueError(f"smooth_value must be > 0, got {smooth_value}")
    n_texts = len(texts)
    if n_texts < 2:
        return [0.0] * n_texts

    lengths: list[int] = []
    counts: list[list[Counter[tuple[str, ...]]]] = []
    for text in texts:
        tokens = tokenize_13a(text, lowercase=lowercase)
        lengths.append(len(tokens))
        counts.append(ngram_counts(tokens, max_order))

    # per order: n-gram -> [largest count, index of the chunk holding it, second largest]
    tops: list[dict[tuple[str, ...], list[int]]] = [{} for _ in range(max_order)]
    for index, chunk_counts in enumerate(counts):
        for top, order_counts in zip(tops, chunk_counts, strict=True):
            for gram, count in order_counts.items():
                entry = top.get(gram)
                if entry is None:
                    top[gram] = [count, index, 0]
                elif count > entry[0]:
                    entry[2] = entry[0]
                    entry[0] = count
                    entry[1] = index
                elif count > entry[2]:
                    entry[2] = count

    sorted_lengths = sorted(lengths)
    scores: list[float] = []
    for index, chunk_counts in enumerate(counts):
        length = lengths[index]
        correct = [0] * max_order
        total = [max(0, length - n) for n in range(max_order)]  # n-grams of order n + 1
        for order, (top, order_counts) in enumerate(zip(tops, chunk_counts, strict=True)):
            matched = 0
            for gram, count in order_counts.items():
                best, holder, second = top[gram]
                other = second if holder == index else best
                matched += count if count < other else other
            correct[order] = matched
        ref_len = _closest_other_length(sorted_lengths, length)
        scores.append(_sentence_score(correct, total, length, ref_len, smooth_value))
    return scores
