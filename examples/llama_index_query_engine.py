"""Clue-RAG as a LlamaIndex query engine, answered by a local LM (fully offline).

``qiter.as_query_engine(llm=...)`` gives a LlamaIndex ``RetrieverQueryEngine`` whose retriever
is Clue-RAG's Q-Iter. Any LlamaIndex ``LLM`` can answer (``OpenAI``, ``Ollama``...); here it is
SmolLM2-135M-Instruct, made a LlamaIndex LLM by the small ``CustomLLM`` subclass
:class:`LocalLlamaIndexLLM`. For each question it prints the response, then its source nodes
with their scores and the Q-Iter paths kept in the node metadata (``explanation``, hidden from
the LLM's prompt). Run it with::

    python examples/llama_index_query_engine.py [--index-dir DIR] [-k 5] [--questions 2] [--stream]
"""

from __future__ import annotations

import threading
import time
from typing import Any

from _common import example_arguments, local_llm, print_source, sample_qiter, sample_questions
from llama_index.core.base.response.schema import StreamingResponse
from llama_index.core.llms import (
    CompletionResponse,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.schema import NodeWithScore
from pydantic import PrivateAttr

from graphrag_integrations.core.llm import TransformersLLM


class LocalLlamaIndexLLM(CustomLLM):
    """A :class:`~graphrag_integrations.core.llm.TransformersLLM` as a LlamaIndex LLM.

    Examples
    --------
    >>> llm = LocalLlamaIndexLLM(local_llm())  # doctest: +SKIP
    >>> llm.complete("What is the capital of France?").text  # doctest: +SKIP
    'The capital of France is Paris.'
    """

    _lm: TransformersLLM = PrivateAttr()

    def __init__(self, lm: TransformersLLM, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._lm = lm

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self._lm.model.config.max_position_embeddings,
            num_output=self._lm.max_new_tokens,
            model_name=self._lm.model_name,
        )

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._lm.complete(prompt).text)

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        from transformers import TextIteratorStreamer

        lm = self._lm
        streamer = TextIteratorStreamer(lm.tokenizer, skip_prompt=True, skip_special_tokens=True)
        generate_kwargs = {
            **lm.encode_prompt(prompt),
            "generation_config": lm.generation_config(),
            "streamer": streamer,
        }
        worker = threading.Thread(target=lm.model.generate, kwargs=generate_kwargs, daemon=True)
        worker.start()
        text = ""
        for delta in streamer:
            text += delta
            yield CompletionResponse(text=text, delta=delta)
        # generate may still be finishing after the last token: a daemon thread inside torch
        # at interpreter exit aborts the process ("terminate called without an active exception")
        worker.join()


def print_sources(nodes: list[NodeWithScore]) -> None:
    """Each source node with its score, title and best Q-Iter path."""
    for nws in nodes:
        print_source(nws.score or 0.0, nws.node.metadata, f"  (node {nws.node.node_id})")


def main() -> None:
    parser = example_arguments(__doc__.splitlines()[0])
    parser.add_argument("--stream", action="store_true", help="print the answer as generated")
    args = parser.parse_args()

    qiter = sample_qiter(args.index_dir)
    llm = LocalLlamaIndexLLM(local_llm(max_new_tokens=32))
    engine = qiter.as_query_engine(llm=llm, similarity_top_k=args.k, streaming=args.stream)
    for item in sample_questions()[: args.questions]:
        print(f"\nQ: {item['question']}   (gold: {item['answer']})\nA: ", end="", flush=True)
        start = time.perf_counter()
        response = engine.query(item["question"])
        if isinstance(response, StreamingResponse):
            for delta in response.response_gen:
                print(delta, end="", flush=True)
            print()
        else:
            print(response)  # a Response prints as its text
        print(f"({time.perf_counter() - start:.1f} s) from {len(response.source_nodes)} nodes:")
        print_sources(response.source_nodes)


if __name__ == "__main__":
    main()
