"""The OpenAI Agents SDK (openai-agents, tracing off), unchanged but for its client's base_url,
against the real model API with the tool hub at /v1/mcp as its MCP server.

Run by contract-tests/openai-agents-python.test.ts, which starts both services, mints a key
with the `chat` and `agents` scopes and sets EURUS_MODEL_URL and EURUS_AGENTS_KEY.
"""

import asyncio
import json
import os

import pytest
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from agents.items import ToolCallItem, ToolCallOutputItem
from agents.mcp import MCPServerStreamableHttp
from agents.memory import OpenAIConversationsSession
from openai import AsyncOpenAI

set_tracing_disabled(True)

MODEL_URL = os.environ["EURUS_MODEL_URL"]
KEY = os.environ["EURUS_AGENTS_KEY"]
INSTRUCTIONS = "You help people find local businesses. Use the directory tools."


def client() -> AsyncOpenAI:
    return AsyncOpenAI(base_url=MODEL_URL + "/v1", api_key=KEY, max_retries=0)


@function_tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return json.dumps({"city": city, "temperature_c": 19, "conditions": "sunny"})


def hub() -> MCPServerStreamableHttp:
    return MCPServerStreamableHttp(
        name="eurus",
        params={"url": MODEL_URL + "/v1/mcp", "headers": {"Authorization": f"Bearer {KEY}"}},
        cache_tools_list=True,
        client_session_timeout_seconds=30,
    )


def tool_names(result) -> list[str]:
    return [item.raw_item.name for item in result.new_items if isinstance(item, ToolCallItem)]


async def two_turns(model) -> None:
    async with hub() as server:
        agent = Agent(
            name="finder",
            instructions=INSTRUCTIONS,
            model=model,
            mcp_servers=[server],
            tools=[get_weather],
        )
        first = await Runner.run(agent, "Search the directory for a bakery in Berlin.", max_turns=6)
        assert "search_directory" in tool_names(first), first.new_items
        outputs = [item for item in first.new_items if isinstance(item, ToolCallOutputItem)]
        assert outputs, first.new_items
        assert isinstance(first.final_output, str) and first.final_output
        # the second turn sends the whole first turn back: messages, calls, their outputs
        second = await Runner.run(
            agent,
            first.to_input_list() + [{"role": "user", "content": "What is the weather in Berlin?"}],
            max_turns=6,
        )
        assert "get_weather" in tool_names(second), second.new_items
        assert "19" in second.final_output


def test_responses_model_runs_a_multi_turn_agent_with_the_hub() -> None:
    asyncio.run(two_turns(OpenAIResponsesModel(model="queen", openai_client=client())))


def test_chat_completions_model_runs_a_multi_turn_agent_with_the_hub() -> None:
    asyncio.run(two_turns(OpenAIChatCompletionsModel(model="queen", openai_client=client())))


def test_agents_runtime_model_through_the_responses_model() -> None:
    async def run() -> None:
        async with hub() as server:
            agent = Agent(
                name="finder",
                instructions=INSTRUCTIONS,
                model=OpenAIResponsesModel(model="agents", openai_client=client()),
                mcp_servers=[server],
            )
            result = await Runner.run(agent, "Search the directory for a plumber in Hamburg.", max_turns=6)
            assert "search_directory" in tool_names(result)
            assert result.final_output

    asyncio.run(run())


def test_conversations_session_keeps_the_turns_on_the_server() -> None:
    async def run() -> None:
        openai = client()
        session = OpenAIConversationsSession(openai_client=openai)
        async with hub() as server:
            agent = Agent(
                name="finder",
                instructions=INSTRUCTIONS,
                model=OpenAIResponsesModel(model="queen", openai_client=openai),
                mcp_servers=[server],
                tools=[get_weather],
            )
            first = await Runner.run(agent, "Search the directory for a bakery in Berlin.", session=session, max_turns=6)
            assert "search_directory" in tool_names(first)
            second = await Runner.run(agent, "What is the weather in Berlin?", session=session, max_turns=6)
            assert "19" in second.final_output
        conversation_id = await session._get_session_id()
        assert conversation_id.startswith("conv_")
        items = await session.get_items()
        kinds = [item.get("type", "message") for item in items]
        assert kinds.count("function_call") >= 2 and kinds.count("function_call_output") >= 2, kinds
        users = [item for item in items if item.get("role") == "user"]
        assert len(users) == 2
        # the server holds the same history the session reads
        listed = [item async for item in openai.conversations.items.list(conversation_id, order="asc")]
        assert [item.id for item in listed] == [item["id"] for item in items]
        assert len(await session.get_items(limit=3)) == 3
        popped = await session.pop_item()
        assert popped is not None and popped["id"] == items[-1]["id"]
        assert len(await session.get_items()) == len(items) - 1
        await session.clear_session()
        with pytest.raises(Exception) as gone:
            await openai.conversations.retrieve(conversation_id)
        assert getattr(gone.value, "status_code", None) == 404

    asyncio.run(run())
