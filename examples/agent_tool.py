"""Clue-RAG as an agent tool, for LangChain and LlamaIndex agents (fully offline).

``qiter.as_langchain_tool(name=..., description=...)`` and ``qiter.as_llama_index_tool(...)``
turn Clue-RAG's Q-Iter into the tools an agent is given. In a real agent a tool-calling chat
model reads the tool's name, description and argument schema, decides to search, and emits a
tool call that the agent runtime executes, e.g.::

    # LangChain: model.bind_tools([tool]), or langchain.agents.create_agent(model, [tool])
    # LlamaIndex: FunctionAgent(tools=[li_tool], llm=a_function_calling_llm)

The offline SmolLM2-135M cannot call tools reliably, so this example plays the model's part:
it prints the schema the model would see, makes the tool call itself exactly as the agent
runtimes execute one (a LangChain ``ToolCall`` dict given to ``tool.invoke``; a LlamaIndex
``ToolSelection`` run by ``call_tool_with_selection``, which calls ``tool.call``) and prints
the text the model would get back. No LM is loaded. Run it with::

    python examples/agent_tool.py [--index-dir DIR] [-k 5] [--question TEXT]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _common import DEFAULT_INDEX_ROOT, sample_qiter, sample_questions
from langchain_core.messages import ToolCall
from langchain_core.utils.function_calling import convert_to_openai_tool
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.tools.calling import call_tool_with_selection

TOOL_NAME = "wiki_search"
TOOL_DESCRIPTION = (
    "Search a small Wikipedia sample for passages that answer a question, following the "
    "entities the question mentions across articles (multi-hop). Input: the question."
)


def shorten(text: str, limit: int = 400) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    return text if len(text) <= limit else f"{text[:limit]}... [{len(text) - limit} more chars]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-dir", type=Path, default=DEFAULT_INDEX_ROOT)
    parser.add_argument("-k", type=int, default=5, help="passages returned per tool call")
    parser.add_argument("--question", default=sample_questions()[1]["question"])
    args = parser.parse_args()
    qiter = sample_qiter(args.index_dir)

    # -- LangChain ------------------------------------------------------------------------
    tool = qiter.as_langchain_tool(name=TOOL_NAME, description=TOOL_DESCRIPTION, k=args.k)
    print("LangChain tool, as the chat model sees it (OpenAI tool format):")
    print(json.dumps(convert_to_openai_tool(tool), indent=2))
    call = ToolCall(name=TOOL_NAME, args={"query": args.question}, id="call_1", type="tool_call")
    message = tool.invoke(call)  # what an agent's tool node does with the model's tool call
    print(
        f"\ntool.invoke({call}) -> {type(message).__name__} (tool_call_id={message.tool_call_id}):"
    )
    print(message.content)
    # the plain form, when calling the tool yourself: a dict of its arguments in, text out
    text = tool.invoke({"query": args.question})
    print(f"\ntool.invoke({{'query': ...}}) -> {len(text)} chars; same: {text == message.content}")

    # -- LlamaIndex -----------------------------------------------------------------------
    li_tool = qiter.as_llama_index_tool(
        name=TOOL_NAME, description=TOOL_DESCRIPTION, similarity_top_k=args.k
    )
    print("\nLlamaIndex tool, as the function-calling LLM sees it:")
    print(json.dumps(li_tool.metadata.to_openai_tool(), indent=2))
    selection = ToolSelection(
        tool_id="call_2", tool_name=TOOL_NAME, tool_kwargs={"input": args.question}
    )
    output = call_tool_with_selection(selection, [li_tool])  # what a FunctionAgent runs
    print(f"\ncall_tool_with_selection -> ToolOutput (is_error={output.is_error}):")
    print(shorten(output.content))
    for nws in output.raw_output:
        print(f"  [{nws.score:.3f}] {nws.node.metadata['title']}")


if __name__ == "__main__":
    main()
