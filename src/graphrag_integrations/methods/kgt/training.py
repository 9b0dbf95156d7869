"""Structure-aware fine-tuning (paper §3.3.3, appendix F.1): training data and training loop.

Training data come from single-hop sub-questions with (head entity ``h*``, supporting passage
``p*``, tail entity ``t*``); MuSiQue's ``question_decomposition`` provides the sub-question,
its supporting paragraph and its answer (:func:`musique_single_hops`). For each one
(:func:`build_training_examples`):

1. **entity removal** - spaCy parses ``p*``; the sentence holding ``t*`` as an entity is
   taken, and every entity in it is masked with ``"##"`` except ``t*``. Decision: only that
   sentence is used, and it is masked exactly like the ParseKG hyperrelation, so the target
   relation is a span of a real hyperrelation (otherwise the constrained decoder could never
   produce it). Steps whose answer is not an entity of ``p*`` are skipped and counted;
2. **relation truncation** - windows of ``window`` (10) whitespace words containing ``t*``;
3. **similarity filtering** - the window maximising cosine(``q``, ``h* + " " + window``)
   (all-MiniLM-L6-v2 by default) is kept and ``t*`` is masked in it: the relation ``r*``.

``h*``: the sub-question's NER entity that is also an entity of ``p*`` (first one), else the
paragraph title when it occurs in the sub-question; otherwise the step is skipped (counted).
``#k`` references in MuSiQue sub-questions are replaced by the answer of step ``k``.

The target sequence is built in token space exactly as the decoder generates it:
``tokenize(h*) ++ [SEP] ++ tokens of r* inside tokenize(hyperrelation) ++ [EOS]``
(:func:`target_ids`), after the translation prompt of appendix M; the loss covers the target
only (eq. 7). :func:`train_translator` runs plain torch on CPU (AdamW, cosine schedule with
warm-up ratio 0.1 as in F.2), with LoRA via ``peft`` by default, and saves a folder that
:func:`load_translator` (and ``ParseKGTranslatorRetriever(translator=path)``) loads.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from graphrag_integrations.core.persistence import atomic_write_json
from graphrag_integrations.core.progress import progress
from graphrag_integrations.core.text.nlp import SpacyNLP, normalize_entity
from graphrag_integrations.methods.kgt.constraints import separator_id
from graphrag_integrations.methods.kgt.translation import translation_prompt

logger = logging.getLogger(__name__)

TRANSLATOR_CONFIG = "kgt_translator.json"
_REF = re.compile(r"#(\d+)")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class SingleHop:
    """One single-hop question with its head passage and answer (before F.1)."""

    question: str
    passage: str
    title: str
    answer: str


@dataclass(frozen=True)
class TrainingExample:
    """A (query, clue) pair of the structure-aware fine-tuning data ``O``.

    Attributes
    ----------
    question : str
        The single-hop query ``q``.
    head : str
        ``h*`` as written (the clue entity).
    relation : str
        ``r*``: a span of ``hyperrelation`` (``t*`` masked).
    hyperrelation : str
        The masked sentence ``r*`` comes from.
    start, end : int
        Character span of ``relation`` in ``hyperrelation``.
    tail : str
        ``t*``.
    similarity : float
        Cosine of the chosen window (step 3).
    """

    question: str
    head: str
    relation: str
    hyperrelation: str
    start: int
    end: int
    tail: str
    similarity: float


def musique_single_hops(items: Iterable[Mapping[str, Any]]) -> list[SingleHop]:
    """The single-hop steps of MuSiQue questions (``question_decomposition``).

    Examples
    --------
    >>> item = {"paragraphs": [{"idx": 0, "title": "T", "paragraph_text": "P"}],
    ...         "question_decomposition": [
    ...             {"question": "Who made X?", "answer": "A", "paragraph_support_idx": 0},
    ...             {"question": "Where was #1 born?", "answer": "B",
    ...              "paragraph_support_idx": 0}]}
    >>> [h.question for h in musique_single_hops([item])]
    ['Who made X?', 'Where was A born?']
    """
    out: list[SingleHop] = []
    for item in items:
        paragraphs = {p["idx"]: p for p in item["paragraphs"]}
        answers: list[str] = []
        for step in item["question_decomposition"]:
            answers.append(str(step["answer"]))
            idx = step.get("paragraph_support_idx")
            if idx is None or idx not in paragraphs:
                continue

            known = tuple(answers[:-1])
            question = _REF.sub(partial(_answer_ref, answers=known), str(step["question"])).strip()
            para = paragraphs[idx]
            out.append(SingleHop(question, para["paragraph_text"], para["title"], answers[-1]))
    return list({(h.question, h.passage, h.answer): h for h in out}.values())


def _answer_ref(match: re.Match[str], answers: Sequence[str]) -> str:
    n = int(match.group(1)) - 1
    return answers[n] if 0 <= n < len(answers) else match.group(0)


def _windows(masked: str, anchor: tuple[int, int], window: int) -> list[tuple[int, int]]:
    """Character spans of the ``window``-word windows of ``masked`` covering ``anchor``."""
    words = [(m.start(), m.end()) for m in _WORD.finditer(masked)]
    if len(words) <= window:
        return [(words[0][0], words[-1][1])] if words else []
    spans = []
    for i in range(len(words) - window + 1):
        start, end = words[i][0], words[i + window - 1][1]
        if start <= anchor[0] and anchor[1] <= end:
            spans.append((start, end))
    return spans


def build_training_examples(
    hops: Sequence[SingleHop],
    *,
    nlp: SpacyNLP | None = None,
    embedder: Any = None,
    window: int = 10,
    mask: str = "##",
    show_progress: bool = False,
) -> tuple[list[TrainingExample], Counter[str]]:
    """Appendix F.1 over ``hops``; returns the examples and the skip counts by reason."""
    from graphrag_integrations.core.encoders.embeddings import as_embedder

    nlp = nlp or SpacyNLP()
    emb = as_embedder(embedder)
    skipped: Counter[str] = Counter()
    parsed = nlp.parse_many([h.passage for h in hops])
    questions = nlp.parse_many([h.question for h in hops])
    examples: list[TrainingExample] = []
    for hop, doc, qdoc in progress(
        zip(hops, parsed, questions, strict=True), "F.1 examples", len(hops), show_progress
    ):
        tail_key = normalize_entity(hop.answer)
        found = None
        for sent in doc.sentences:
            for ent in sent.entities:
                if ent.norm == tail_key:
                    found = (sent, ent)
                    break
            if found:
                break
        if found is None:
            skipped["answer_not_an_entity"] += 1
            continue
        sent, tail = found
        passage_keys = {e.norm for e in doc.entities}
        heads = [e.text for e in qdoc.entities if e.norm in passage_keys and e.norm != tail_key]
        title_key = normalize_entity(hop.title)
        if heads:
            head = heads[0]
        elif title_key and title_key != tail_key and title_key in normalize_entity(hop.question):
            head = hop.title
        else:
            skipped["no_head_entity"] += 1
            continue
        masked = sent.masked(mask)
        # where t*'s mask sits in the hyperrelation: same masking walk as Sentence.masked
        anchor = _mask_position(sent, tail, mask)
        spans = _windows(masked, anchor, window)
        if not spans:
            skipped["no_window"] += 1
            continue
        texts = [
            head + " " + masked[s:e][: anchor[0] - s] + tail.text + masked[s:e][anchor[1] - s :]
            for s, e in spans
        ]
        sims = emb.embed(texts) @ emb.embed_query(hop.question)
        best = int(np.argmax(sims))
        s, e = spans[best]
        examples.append(
            TrainingExample(
                hop.question, head, masked[s:e], masked, s, e, hop.answer, float(sims[best])
            )
        )
    if skipped:
        logger.info("F.1: %d examples, skipped %s", len(examples), dict(skipped))
    return examples, skipped


def _mask_position(sentence: Any, target: Any, mask: str) -> tuple[int, int]:
    """Character span of ``target``'s mask in ``sentence.masked(mask)``."""
    pos = 0
    out_len = 0
    for ent in sorted(sentence.entities, key=lambda x: x.start_char):
        start = max(ent.start_char - sentence.start_char, pos)
        end = min(ent.end_char - sentence.start_char, len(sentence.text))
        if end <= start:
            continue
        out_len += start - pos
        if ent is target:
            return out_len, out_len + len(mask)
        out_len += len(mask)
        pos = end
    raise ValueError("target entity is not in the sentence")


def target_ids(tokenizer: Any, example: TrainingExample) -> list[int]:
    """``tokenize(h*) ++ [SEP] ++ span tokens ++ [EOS]`` (what constrained decoding emits).

    The span tokens are the tokens of ``tokenize(hyperrelation)`` whose text (leading
    whitespace ignored) lies inside ``[start, end)``, so they are a contiguous substring of the
    tokenised hyperrelation, as the relation constraint requires.
    """
    head = tokenizer(example.head, add_special_tokens=False)["input_ids"]
    enc = tokenizer(example.hyperrelation, add_special_tokens=False, return_offsets_mapping=True)
    span = []
    text = example.hyperrelation
    for tok, (s, e) in zip(enc["input_ids"], enc["offset_mapping"], strict=True):
        while s < e and text[s].isspace():
            s += 1
        if example.start <= s and e <= example.end and s < e:
            span.append(int(tok))
    if not span:
        raise ValueError(f"no token of the relation span {example.relation!r}")
    return [*head, separator_id(tokenizer), *span, int(tokenizer.eos_token_id)]


def _base_lm(base_model: Any) -> Any:
    from graphrag_integrations.core.llm import TransformersLLM

    if base_model is None or isinstance(base_model, (str, Path)):
        return TransformersLLM(base_model)
    return base_model


def cosine_schedule(optimizer: Any, total: int, warmup: int) -> Any:
    """The learning-rate schedule of :func:`train_translator`: step ``i`` (from 0) of
    ``total`` runs at ``lr * (i + 1) / (warmup + 1)`` for the ``warmup`` first, then at
    ``lr * (1 + cos(pi * (i - warmup) / (total - warmup))) / 2``.

    That is transformers' ``get_cosine_schedule_with_warmup`` one step ahead (it would run
    the first step at lr 0): made for ``warmup + 1`` and ``total + 1`` steps and started at
    step 1, as a scheduler resumed at ``last_epoch=0`` is.
    """
    from transformers import get_cosine_schedule_with_warmup

    for group in optimizer.param_groups:  # what a resumed scheduler starts from
        group.setdefault("initial_lr", group["lr"])
    return get_cosine_schedule_with_warmup(optimizer, warmup + 1, total + 1, last_epoch=0)


def train_translator(
    examples: Sequence[TrainingExample],
    output_dir: str | Path,
    *,
    base_model: Any = None,
    lora: bool = True,
    lora_r: int = 8,
    lora_alpha: int = 16,
    epochs: float = 1.0,
    max_steps: int | None = None,
    batch_size: int = 8,
    learning_rate: float = 2e-4,
    warmup_ratio: float = 0.1,
    seed: int = 0,
    show_progress: bool = False,
) -> dict[str, Any]:
    """Fine-tune the translator on ``examples`` (eq. 7) and save it to ``output_dir``.

    Parameters
    ----------
    examples : sequence of TrainingExample
        From :func:`build_training_examples`.
    output_dir : str or Path
        Receives the LoRA adapter (or the full model), the tokenizer and
        ``kgt_translator.json``.
    base_model : str, Path or TransformersLLM, optional
        ``None``: SmolLM2-135M-Instruct (offline).
    lora : bool
        LoRA adapters via ``peft`` (default) or full fine-tuning (the paper's setting).
    epochs, max_steps, batch_size, learning_rate, warmup_ratio : training settings
        ``max_steps`` caps the optimiser steps. Paper (F.2): full fine-tuning, batch 64,
        lr 1e-5, 1 epoch, cosine schedule, warm-up 0.1; LoRA needs a larger lr.

    Returns
    -------
    dict
        ``steps``, ``examples``, ``losses`` (per step) and ``output_dir``.
    """
    import torch

    if not examples:
        raise ValueError("no training examples")
    torch.manual_seed(seed)
    lm = _base_lm(base_model)
    tokenizer = lm.tokenizer
    model = lm.model
    if lora:
        from peft import LoraConfig, get_peft_model

        config = LoraConfig(
            r=lora_r, lora_alpha=lora_alpha, lora_dropout=0.0, target_modules="all-linear",
            task_type="CAUSAL_LM",
        )  # fmt: skip
        model = get_peft_model(model, config)
    model.train()
    rows = []
    for ex in examples:
        prompt = lm.encode_prompt(translation_prompt(ex.question))["input_ids"][0].tolist()
        clue = target_ids(tokenizer, ex)
        rows.append((prompt + clue, [-100] * len(prompt) + clue))
    per_epoch = math.ceil(len(rows) / batch_size)
    total = max_steps if max_steps is not None else max(1, math.ceil(epochs * per_epoch))
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=learning_rate)
    scheduler = cosine_schedule(optimizer, total, int(total * warmup_ratio))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    rng = np.random.default_rng(seed)
    order: list[int] = []
    losses: list[float] = []
    for _ in progress(range(total), "Training translator", total, show_progress):
        if len(order) < batch_size:
            order.extend(rng.permutation(len(rows)).tolist())
        batch = [rows[i] for i in order[:batch_size]]
        del order[:batch_size]
        width = max(len(ids) for ids, _ in batch)
        ids_t = torch.full((len(batch), width), pad, dtype=torch.long)
        labels = torch.full((len(batch), width), -100, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for b, (ids, lab) in enumerate(batch):  # right padding for training
            ids_t[b, : len(ids)] = torch.tensor(ids)
            labels[b, : len(lab)] = torch.tensor(lab)
            mask[b, : len(ids)] = 1
        out = model(input_ids=ids_t.to(model.device), attention_mask=mask.to(model.device),
                    labels=labels.to(model.device))  # fmt: skip
        out.loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        losses.append(float(out.loss.detach()))
    model.eval()
    target = Path(output_dir)
    target.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(target))
    tokenizer.save_pretrained(str(target))
    if lora:
        _half_precision(target / "adapter_model.safetensors")
    # the default SmolLM2 (converted from its GGUF on each machine) is recorded as None
    base_path = getattr(lm, "_source", None) or None
    info = {
        "format": "graphrag-integrations/kgt-translator",
        "version": 1,
        "base_model": str(base_path) if lora and base_path else None,
        "lora": lora,
        "use_chat_template": getattr(lm, "use_chat_template", None),
        "steps": total,
        "examples": len(examples),
        "final_loss": losses[-1],
        "settings": {
            "lora_r": lora_r, "lora_alpha": lora_alpha, "batch_size": batch_size,
            "learning_rate": learning_rate, "warmup_ratio": warmup_ratio, "seed": seed,
        },
    }  # fmt: skip
    atomic_write_json(target / TRANSLATOR_CONFIG, info)
    logger.info("trained translator: %d steps, final loss %.4f -> %s", total, losses[-1], target)
    return {"steps": total, "examples": len(examples), "losses": losses, "output_dir": str(target)}


def _half_precision(file: Path) -> None:
    """Store the adapter weights in float16 (half the size; merged into the base on load)."""
    import torch
    from safetensors.torch import load_file, save_file

    if file.is_file():
        tensors = load_file(str(file))
        save_file({k: v.to(torch.float16) for k, v in tensors.items()}, str(file))


def _adapted_lm_class() -> type:
    from graphrag_integrations.core.llm import TransformersLLM
    from graphrag_integrations.core.llm.precision import precision_suffix

    class AdaptedTranslator(TransformersLLM):
        """A ``TransformersLLM`` whose model is the base with a LoRA adapter merged in."""

        def __init__(self, base: str | None, adapter: Path, **kwargs: Any) -> None:
            super().__init__(base, **kwargs)
            self.adapter = adapter
            self.model_name = f"{adapter}{precision_suffix(self.dtype)}"

        def _load(self) -> tuple[Any, Any]:
            from peft import PeftModel

            model, tokenizer = super()._load()
            # merged in float32; ``TransformersLLM`` then casts to ``dtype`` (if any)
            merged = PeftModel.from_pretrained(model, str(self.adapter)).merge_and_unload()
            return merged.float(), tokenizer

    return AdaptedTranslator


def load_translator(path: str | Path, *, dtype: str | None = None) -> Any:
    """Load a translator saved by :func:`train_translator`, or any causal LM folder/name.

    A LoRA folder gives a ``TransformersLLM`` (subclass) whose model is the base model with
    the adapter merged (in float32) on first use, then cast to ``dtype``; ``model_name`` is
    the adapter folder, with a ``[dtype]`` suffix for a precision other than float32 (the
    resolved one for ``"auto"``, as ``TransformersLLM`` names its model, so response caches
    never mix precisions).

    Parameters
    ----------
    path : str or Path
        Adapter folder written by :func:`train_translator`, or a causal LM path / name.
    dtype : str, optional
        ``TransformersLLM``'s ``dtype``: ``None`` (the checkpoint's), ``"auto"`` (bfloat16
        on hardware that computes it natively, else float32), ``"float32"``, ``"bfloat16"``
        or ``"float16"``.

    Raises
    ------
    ModelUnavailableError
        When the folder or its base model cannot be loaded (on first use).
    """
    from graphrag_integrations.core.llm import TransformersLLM

    folder = Path(path)
    config_file = folder / TRANSLATOR_CONFIG
    info: dict[str, Any] = {}
    if config_file.is_file():
        info = json.loads(config_file.read_text(encoding="utf-8"))
    template = info.get("use_chat_template")
    if (folder / "adapter_config.json").is_file():
        base = info.get("base_model")
        if base is None and "base_model" not in info:  # None: the default SmolLM2
            adapter_cfg = json.loads((folder / "adapter_config.json").read_text(encoding="utf-8"))
            base = adapter_cfg.get("base_model_name_or_path")
        return _adapted_lm_class()(base, folder, use_chat_template=template, dtype=dtype)
    return TransformersLLM(str(path), use_chat_template=template, dtype=dtype)


def examples_to_jsonl(examples: Iterable[TrainingExample], path: str | Path) -> int:
    """Write examples one JSON object per line; returns the count."""
    lines = [json.dumps(asdict(ex), ensure_ascii=False) for ex in examples]
    Path(path).write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    return len(lines)


#: Cross-fitting folds of :func:`train`: ``"a"`` trains on the first half of the questions
#: (and reports on the second), ``"b"`` the reverse, ``"all"`` uses every question.
FOLDS = ("all", "a", "b")
HELDOUT_FILE = "heldout_questions.json"


def split_fold(items: Sequence[Any], fold: str) -> tuple[list[Any], list[Any]]:
    """``(train, held out)`` items of ``fold`` (halves in file order).

    Examples
    --------
    >>> split_fold([1, 2, 3, 4, 5], "a")
    ([1, 2], [3, 4, 5])
    >>> split_fold([1, 2, 3, 4, 5], "b")
    ([3, 4, 5], [1, 2])
    >>> split_fold([1, 2], "all")
    ([1, 2], [])
    """
    if fold not in FOLDS:
        raise ValueError(f"fold must be one of {FOLDS}, got {fold!r}")
    half = len(items) // 2
    first, second = list(items[:half]), list(items[half:])
    if fold == "a":
        return first, second
    if fold == "b":
        return second, first
    return list(items), []


def train(
    dataset: Path,
    out: Path,
    *,
    params: Any,
    show_progress: bool = False,
    embedder: Any = None,
) -> dict[str, Any]:
    """The ``graphrag-integrations train --method kgt`` trainer (registry contract).

    Reads MuSiQue questions (``dataset``: a folder with ``questions.json`` or the file),
    keeps the training half of ``params.fold``, builds the F.1 data, fine-tunes the translator
    and writes into ``out``: the adapter (see :func:`train_translator`), ``train_data.jsonl``,
    the held-out questions (``heldout_questions.json``, to evaluate with ``eval --queries``)
    and ``kgt_translator.json`` with the provenance (data, fold, counts, steps, times).

    Parameters
    ----------
    dataset : Path
        MuSiQue-format questions (``question_decomposition`` and ``paragraphs`` per item).
    out : Path
        Output directory (created).
    params : KGTTrainParams
        Training options.
    show_progress : bool
        Progress bars.
    embedder : Embedder, optional
        F.1 similarity filter (default: all-MiniLM-L6-v2).
    """
    import hashlib
    import time

    from graphrag_integrations.core.encoders.embeddings import as_embedder

    file = dataset / "questions.json" if dataset.is_dir() else dataset
    if not file.is_file():
        raise FileNotFoundError(f"no MuSiQue questions at {file}")
    raw = file.read_bytes()
    items = json.loads(raw)
    if not isinstance(items, list) or not all("question_decomposition" in i for i in items):
        raise ValueError(f"{file}: expected a list of MuSiQue items with question_decomposition")
    train_items, heldout = split_fold(items, params.fold)
    t0 = time.perf_counter()
    hops = musique_single_hops(train_items)
    examples, skipped = build_training_examples(
        hops,
        nlp=SpacyNLP(params.spacy_model) if params.spacy_model else SpacyNLP(),
        embedder=as_embedder(embedder),
        window=params.window,
        show_progress=show_progress,
    )
    data_s = time.perf_counter() - t0
    logger.info("F.1 data: %d examples from %d hops (%s skipped)", len(examples), len(hops),
                dict(skipped))  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    examples_to_jsonl(examples, out / "train_data.jsonl")
    if heldout:
        atomic_write_json(out / HELDOUT_FILE, heldout, indent=None)
    t1 = time.perf_counter()
    report = train_translator(
        examples,
        out,
        base_model=params.base_model,
        lora=params.lora,
        lora_r=params.lora_r,
        lora_alpha=2 * params.lora_r,
        epochs=params.epochs,
        max_steps=params.max_steps,
        batch_size=params.batch_size,
        learning_rate=params.learning_rate,
        seed=params.seed,
        show_progress=show_progress,
    )
    train_s = time.perf_counter() - t1
    provenance = {
        "data": str(file),
        "data_sha256": hashlib.sha256(raw).hexdigest(),
        "fold": params.fold,
        "questions_trained": len(train_items),
        "questions_held_out": len(heldout),
        "single_hops": len(hops),
        "skipped": dict(skipped),
        "data_seconds": round(data_s, 1),
        "train_seconds": round(train_s, 1),
        "prompt_sha256": hashlib.sha256(translation_prompt("").encode()).hexdigest()[:16],
        "params": {k: v for k, v in vars(params).items()},
    }
    config = out / TRANSLATOR_CONFIG
    info = json.loads(config.read_text(encoding="utf-8"))
    info["provenance"] = provenance
    atomic_write_json(config, info)
    losses = report["losses"]
    return {
        "output_dir": str(out),
        "examples": len(examples),
        "steps": report["steps"],
        "first_loss": round(losses[0], 4),
        "final_loss": round(losses[-1], 4),
        **provenance,
    }
