"""Clue-RAG in a LangChain LCEL chain, answered by a local LM (fully offline).

The chain is the usual RAG pipeline::

    {"context": retriever | format_docs, "question": RunnablePassthrough()}
    | prompt | llm | StrOutputParser()

with ``retriever = qiter.as_langchain_retriever(k=5)`` (Clue-RAG's Q-Iter as a LangChain
``BaseRetriever``) and, as ``llm``, SmolLM2-135M-Instruct wrapped in a ``RunnableLambda``; any
LangChain chat model (``ChatOpenAI``, ``ChatOllama``...) drops in instead. It also awaits the
retriever once (``ainvoke``) to show the async path, whose documents carry the Q-Iter paths in
their metadata. Run it with::

    python examples/langchain_lcel.py [--index-dir DIR] [-k 5] [--questions 2]
"""

from __future__ import annotations

import asyncio
import time

from _common import (
    ANSWER_PROMPT,
    example_arguments,
    local_llm,
    print_source,
    sample_qiter,
    sample_questions,
)
from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompt_values import PromptValue
from langchain_core.prompts import PromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough

from graphrag_integrations.core.llm import TransformersLLM


def format_docs(docs: list[Document]) -> str:
    """Join the retrieved passages into the prompt's context (each starts with its title)."""
    return "\n\n".join(doc.page_content for doc in docs)


def as_runnable(llm: TransformersLLM) -> Runnable[PromptValue, str]:
    """The local LM as a LangChain Runnable: prompt value in, completion text out."""

    def generate(prompt: PromptValue) -> str:
        return llm.complete(prompt.to_string()).text

    return RunnableLambda(generate, name=llm.model_name)


def build_chain(retriever: BaseRetriever, llm: TransformersLLM) -> Runnable[str, str]:
    """The LCEL RAG chain: question in, answer out."""
    prompt = PromptTemplate.from_template(ANSWER_PROMPT)
    return (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | prompt
        | as_runnable(llm)
        | StrOutputParser()
    )


async def show_async(retriever: BaseRetriever, question: str) -> None:
    """Await the retriever once and print each document with its best Q-Iter path."""
    docs = await retriever.ainvoke(question)
    print(f"\nawait retriever.ainvoke({question!r}) -> {len(docs)} documents")
    for doc in docs:
        print_source(doc.metadata["score"], doc.metadata)


def main() -> None:
    parser = example_arguments(__doc__.splitlines()[0])
    args = parser.parse_args()

    retriever = sample_qiter(args.index_dir).as_langchain_retriever(k=args.k)
    chain = build_chain(retriever, local_llm(max_new_tokens=32))
    for item in sample_questions()[: args.questions]:
        start = time.perf_counter()
        answer = chain.invoke(item["question"])
        print(
            f"\nQ: {item['question']}\nA: {answer}   (gold: {item['answer']}; "
            f"{time.perf_counter() - start:.1f} s)"
        )
    asyncio.run(show_async(retriever, sample_questions()[0]["question"]))


if __name__ == "__main__":
    main()
