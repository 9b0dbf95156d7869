"""Reading the results of the MCP search tools (``graphrag-integrations serve``) in tests."""

from __future__ import annotations

from mcp.types import CallToolResult


def result_ids(result: CallToolResult) -> list[str]:
    """The passage ids of a successful search result, in rank order."""
    assert not result.isError, result.content
    assert result.structuredContent is not None
    return [row["id"] for row in result.structuredContent["passages"]]


def one_line_error(result: CallToolResult) -> str:
    """The text of an error result, which must be one line."""
    assert result.isError
    (content,) = result.content
    text: str = getattr(content, "text", "")
    assert text and "\n" not in text
    return text
