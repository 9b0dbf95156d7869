"""A reproducible scale corpus: entity-renamed copies of the shared passages, as JSONL.

Usage (from the repository root, ``--data`` defaults to ``../shared/data``)::

    python benchmarks/scale_corpus.py --size 40000 --out /work/scale-runs/corpus-40k.jsonl

The originals are the passages of HotpotQA-100, MuSiQue-100 and the 2Wiki corpus, in that
order, deduplicated (9,003 passages; ``copy`` 0 of the output). Copy ``c >= 1`` repeats every
original with its names replaced by synthetic ones, consistently within the copy: the same
word becomes the same synthetic word in every passage of copy ``c`` (so the renamed copy is a
small self-consistent world of its own, with its own multi-hop links), and another one in copy
``c + 1``. The synthetic word is a function of ``(seed, copy, word)`` alone (BLAKE2b), so the
output does not depend on the order of the passages, and the stream is written copy after copy
until ``--size`` passages: **the corpus of size n is a prefix of every larger one** (one
incremental build of the largest corpus can be snapshotted at the smaller sizes). Copy 0 keeps
the HotpotQA-100 and MuSiQue-100 gold passages with their original ids, so recall stays
measurable, with the renamed copies as distractors (a renamed gold passage is not gold: its
names are not the question's).

Names to replace (``--names``):

``capitalized`` (default)
    every word starting with an upper-case letter, except a short list of capitalised function
    words and month / weekday names. Cheap (the 40,000 passages in about 10 s, reading the
    sources included) and independent of any model version, so the checksum is stable across
    environments.
``spacy``
    the capitalised words inside the spans spaCy ``en_core_web_sm`` (the package's offline
    default pipeline) tags as named entities (persons, organisations, places, works, ...).
    Much slower (docs/lab/scale.md has the timing) and tied to the model version.

Output lines are ``{"title": ..., "text": ..., "copy": c}`` (the ``title`` / ``text`` of a
corpus entry, as in the shared ``corpus.json`` files). The script prints the passage count,
the time taken and the SHA-256 of the output file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from graphrag_integrations.evaluation.datasets import load_corpus

#: The shared corpora the originals come from, in output order.
SOURCES = ("hotpotqa-100", "musique-100", "2wiki-corpus")

_KEEP_WORDS = """
    A An The This That These Those There Here It Its He She His Her They Their Them We Our I You
    In On At By For From Of To With Without And But Or Nor As After Before During When While
    Where Which Who Whom Whose What Why How If Although Though Since Until Upon Into Over Under
    Between Among Also However Both Each Every Some Many Most Several All No Not One Two Three
    Is Was Are Were Be Been Has Had Have Do Does Did
    January February March April May June July August September October November December
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday
"""
#: Capitalised words that are not names (sentence starts, months, weekdays).
KEEP = frozenset(_KEEP_WORDS.split())

#: spaCy entity labels whose words are renamed in ``--names spacy``.
SPACY_LABELS = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "EVENT", "WORK_OF_ART", "PRODUCT", "LAW"}
)

_WORD = re.compile(r"[^\W\d_][\w'\u2019-]*")
_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st", "th")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")

Row = tuple[str, str]


def synthetic_word(word: str, copy: int, seed: int) -> str:
    """The synthetic replacement of ``word`` in copy ``copy``: seeded, about as long, same case.

    Examples
    --------
    >>> synthetic_word("Paris", 1, 0) == synthetic_word("Paris", 1, 0)
    True
    >>> synthetic_word("Paris", 1, 0) != synthetic_word("Paris", 2, 0)
    True
    >>> synthetic_word("NASA", 1, 0).isupper(), synthetic_word("Paris", 1, 0)[0].isupper()
    (True, True)
    """
    digest = hashlib.blake2b(f"{seed}/{copy}/{word}".encode(), digest_size=16).digest()
    syllables = max(2, min(4, round(len(word) / 3)))
    out = "".join(
        _ONSETS[digest[2 * i] % len(_ONSETS)] + _VOWELS[digest[2 * i + 1] % len(_VOWELS)]
        for i in range(syllables)
    )
    return out.upper() if word.isupper() and len(word) > 1 else out.capitalize()


def is_name_word(word: str) -> bool:
    """Whether the ``capitalized`` rule renames ``word``.

    Examples
    --------
    >>> [w for w in "The Eiffel Tower in Paris opened in March 1889 .".split() if is_name_word(w)]
    ['Eiffel', 'Tower', 'Paris']
    """
    return len(word) > 1 and word[0].isupper() and word not in KEEP and bool(_WORD.fullmatch(word))


def rename_capitalized(text: str, copy: int, seed: int) -> str:
    """``text`` with every name word replaced by its synthetic word of ``copy``.

    Examples
    --------
    >>> a = rename_capitalized("Ada Lovelace met Babbage in London.", 1, 0)
    >>> b = rename_capitalized("Babbage lived in London.", 1, 0)
    >>> a.split()[5] == b.split()[3]  # London -> the same name
    True
    >>> "met" in a and "London" not in a
    True
    """
    return _WORD.sub(
        lambda m: synthetic_word(m[0], copy, seed) if is_name_word(m[0]) else m[0], text
    )


def spacy_renamer(seed: int) -> Callable[[list[str], int], list[str]]:
    """A batch renamer replacing the capitalised words of spaCy's named-entity spans."""
    import spacy

    from graphrag_integrations.core.encoders.models import resolve_spacy_model

    nlp = spacy.load(resolve_spacy_model(None), disable=["parser", "lemmatizer"])
    spans_cache: dict[str, list[tuple[int, int]]] = {}

    def rename(texts: list[str], copy: int) -> list[str]:
        todo = [t for t in dict.fromkeys(texts) if t not in spans_cache]
        for text, doc in zip(todo, nlp.pipe(todo, batch_size=256), strict=True):
            spans_cache[text] = [
                (e.start_char, e.end_char) for e in doc.ents if e.label_ in SPACY_LABELS
            ]
        out = []
        for text in texts:
            parts, last = [], 0
            for start, end in spans_cache[text]:
                parts += [text[last:start], rename_capitalized(text[start:end], copy, seed)]
                last = end
            out.append("".join([*parts, text[last:]]))
        return out

    return rename


def originals(data: Path) -> list[Row]:
    """(title, text) of the deduplicated passages of :data:`SOURCES` under ``data``, in order."""
    seen: set[str] = set()
    rows: list[Row] = []
    for name in SOURCES:
        for p in load_corpus(data / name):
            if p.id in seen:
                continue
            seen.add(p.id)
            title = str(p.metadata["title"])
            rows.append((title, p.text[len(title) + 1 :]))
    return rows


def scale_rows(
    rows: list[Row],
    size: int,
    *,
    seed: int = 0,
    renamer: Callable[[list[str], int], list[str]] | None = None,
) -> Iterator[tuple[int, str, str]]:
    """``(copy, title, text)`` of the first ``size`` passages of the scale stream over ``rows``.

    Copy 0 is ``rows``; copy ``c`` renames every row; exact repeats (a row without any name)
    are skipped, so every passage of the stream is distinct.

    Examples
    --------
    >>> rows = [("Oslo", "Oslo is in Norway."), ("Rome", "Rome is in Italy.")]
    >>> out = list(scale_rows(rows, 5))
    >>> [c for c, _, _ in out], out[:2] == [(0, *r) for r in rows]
    ([0, 0, 1, 1, 2], True)
    >>> out[:3] == list(scale_rows(rows, 3))  # the prefix property
    True
    """
    if size < 0:
        raise ValueError(f"size must be >= 0, got {size}")
    if not rows and size:
        raise ValueError("no passages to copy")
    seen: set[tuple[str, str]] = set()
    emitted, copy, stale = 0, 0, 0
    while emitted < size:
        if copy == 0:
            batch = rows
        elif renamer is None:
            batch = [
                (rename_capitalized(t, copy, seed), rename_capitalized(x, copy, seed))
                for t, x in rows
            ]
        else:
            renamed = renamer([t for t, _ in rows] + [x for _, x in rows], copy)
            batch = list(zip(renamed[: len(rows)], renamed[len(rows) :], strict=True))
        fresh = 0
        for row in batch:
            if emitted >= size:
                break
            if row in seen:
                continue
            seen.add(row)
            fresh += 1
            emitted += 1
            yield copy, row[0], row[1]
        stale = 0 if fresh else stale + 1
        if stale >= 2:
            raise ValueError(f"the passages have no names to rename: stuck at {emitted} < {size}")
        copy += 1


def write_jsonl(items: Iterable[tuple[int, str, str]], out: Path) -> tuple[int, str]:
    """Write the stream as JSONL to ``out``; returns (lines, SHA-256 hex of the file)."""
    digest = hashlib.sha256()
    n = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for copy, title, text in items:
            line = json.dumps({"title": title, "text": text, "copy": copy}, ensure_ascii=False)
            data = line + "\n"
            fh.write(data)
            digest.update(data.encode("utf-8"))
            n += 1
    return n, digest.hexdigest()


def read_jsonl(path: Path, limit: int | None = None) -> list[Row]:
    """(title, text) of the first ``limit`` lines (all without) of a scale corpus file."""
    rows: list[Row] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if limit is not None and len(rows) >= limit:
                break
            item = json.loads(line)
            rows.append((str(item["title"]), str(item["text"])))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"), help="benchmark root")
    ap.add_argument("--size", type=int, default=40_000, help="passages to write")
    ap.add_argument("--seed", type=int, default=0, help="seed of the synthetic names")
    ap.add_argument("--names", choices=("capitalized", "spacy"), default="capitalized")
    ap.add_argument("--out", type=Path, required=True, help="the JSONL file to write")
    args = ap.parse_args()
    if args.out.exists():
        raise SystemExit(f"{args.out} exists: remove it or choose another --out")
    t = time.perf_counter()
    rows = originals(args.data)
    renamer = spacy_renamer(args.seed) if args.names == "spacy" else None
    n, sha = write_jsonl(scale_rows(rows, args.size, seed=args.seed, renamer=renamer), args.out)
    took = time.perf_counter() - t
    print(f"{n} passages ({len(rows)} originals, names={args.names}, seed={args.seed})")
    print(f"generated in {took:.1f}s; sha256 {sha}  {args.out}")


if __name__ == "__main__":
    main()
