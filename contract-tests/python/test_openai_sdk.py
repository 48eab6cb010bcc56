"""The official OpenAI Python SDK, unchanged but for base_url, against the real model API.

Run by contract-tests/openai-python.test.ts, which starts the server, mints the keys and sets:
EURUS_MODEL_URL, EURUS_ADMIN_KEY (every scope), EURUS_SEARCH_ONLY_KEY (no model API scope)
and EURUS_LIMIT_KEY (chat, used by the 429 test alone).
"""

import base64
import json
import math
import os

import openai
import pytest
from openai import OpenAI

BASE_URL = os.environ["EURUS_MODEL_URL"] + "/v1"
CATALOGUE = ["king", "queen", "prince", "voice", "imagine", "agents", "mcp"]
FORECAST_TOOL = {
    "type": "function",
    "function": {
        "name": "get_forecast",
        "description": "Weather forecast for a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
            },
            "required": ["city", "days"],
            "additionalProperties": False,
        },
    },
}


def client_for(key: str, **kwargs) -> OpenAI:
    return OpenAI(base_url=BASE_URL, api_key=key, max_retries=0, **kwargs)


@pytest.fixture(scope="module")
def client() -> OpenAI:
    return client_for(os.environ["EURUS_ADMIN_KEY"])


def test_lists_and_retrieves_models(client: OpenAI) -> None:
    page = client.models.list()
    assert [m.id for m in page] == CATALOGUE
    queen = client.models.retrieve("queen")
    assert (queen.id, queen.object, queen.owned_by) == ("queen", "model", "eurus")
    assert isinstance(queen.created, int)
    # Our catalogue's own fields come through the SDK's model as extras.
    assert queen.model_extra["context_window"] == 64_000


def test_chats_buffered(client: OpenAI) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="queen",
        messages=[
            {"role": "system", "content": "You answer briefly."},
            {"role": "user", "content": "Which trains cross the Brenner pass?"},
        ],
        seed=5,
    )
    completion = raw.parse()
    assert raw.http_request.headers["accept"] == "application/json"
    assert completion.object == "chat.completion"
    assert completion.model == "queen"
    assert completion._request_id == raw.headers["x-request-id"]
    choice = completion.choices[0]
    assert choice.message.role == "assistant"
    assert choice.message.content and choice.message.content.strip()
    assert choice.finish_reason in ("stop", "length")
    usage = completion.usage
    assert usage is not None and usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_chats_streamed_with_include_usage_as_buffered(client: OpenAI) -> None:
    request = {
        "model": "prince",
        "messages": [{"role": "user", "content": "Summarise the rules of pétanque."}],
        "seed": 11,
    }
    stream = client.chat.completions.create(
        **request, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    *content, last = chunks
    # include_usage: a last chunk without choices carries the usage; no other chunk does.
    assert last.choices == [] and last.usage is not None
    assert all(c.usage is None for c in content)
    text = "".join(c.choices[0].delta.content or "" for c in content if c.choices)
    finish = [c.choices[0].finish_reason for c in content if c.choices and c.choices[0].finish_reason]
    assert finish in (["stop"], ["length"])
    # The same seed buffered: the same text, billed the same.
    buffered = client.chat.completions.create(**request)
    assert text == buffered.choices[0].message.content
    assert last.usage.model_dump() == buffered.usage.model_dump()


def test_returns_tool_calls_and_takes_the_result_back(client: OpenAI) -> None:
    messages = [{"role": "user", "content": "What is the weather in Lyon tomorrow?"}]
    completion = client.chat.completions.create(
        model="queen", messages=messages, tools=[FORECAST_TOOL], tool_choice="required"
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    call = choice.message.tool_calls[0]
    assert call.type == "function" and call.function.name == "get_forecast"
    assert call.id
    args = json.loads(call.function.arguments)
    assert isinstance(args["city"], str)
    assert isinstance(args["days"], int) and 1 <= args["days"] <= 7
    # The tool's answer goes back as a `tool` message; the model answers in text.
    follow_up = client.chat.completions.create(
        model="queen",
        messages=[
            *messages,
            choice.message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": '{"forecast": "sunny, 24 °C"}'},
        ],
        tools=[FORECAST_TOOL],
    )
    assert follow_up.choices[0].message.content


def norm(vector: list[float]) -> float:
    return math.sqrt(sum(x * x for x in vector))


def test_embeds_texts_as_floats(client: OpenAI) -> None:
    texts = ["Bakeries in Lyon", "Bicycle repair near Ghent"]
    result = client.embeddings.create(model="prince", input=texts, encoding_format="float")
    assert result.object == "list" and result.model == "prince"
    assert [d.index for d in result.data] == [0, 1]
    assert all(d.object == "embedding" and len(d.embedding) == 384 for d in result.data)
    assert all(abs(norm(d.embedding) - 1) < 1e-3 for d in result.data)
    assert result.data[0].embedding != result.data[1].embedding
    assert result.usage.prompt_tokens > 0
    assert result.usage.total_tokens == result.usage.prompt_tokens


def test_embeds_by_default_in_base64_which_the_sdk_decodes(client: OpenAI) -> None:
    # Without encoding_format the SDK asks for base64 and decodes the float32 bytes itself.
    text = "Opening hours of the Musée des Confluences"
    decoded = client.embeddings.create(model="prince", input=text).data[0].embedding
    floats = client.embeddings.create(model="prince", input=text, encoding_format="float").data[0].embedding
    assert len(decoded) == 384
    assert max(abs(a - b) for a, b in zip(decoded, floats)) < 1e-6
    short = client.embeddings.create(model="prince", input=text, dimensions=64).data[0].embedding
    assert len(short) == 64 and abs(norm(short) - 1) < 1e-3


def test_raises_authentication_error_on_401() -> None:
    with pytest.raises(openai.AuthenticationError) as caught:
        client_for("sk_" + "0" * 48).models.list()
    error = caught.value
    assert error.status_code == 401
    assert (error.type, error.code) == ("authentication_error", "invalid_api_key")
    assert error.request_id and error.request_id == error.body["request_id"]


def test_raises_permission_denied_error_on_403() -> None:
    with pytest.raises(openai.PermissionDeniedError) as caught:
        client_for(os.environ["EURUS_SEARCH_ONLY_KEY"]).chat.completions.create(
            model="queen", messages=[{"role": "user", "content": "hi"}]
        )
    error = caught.value
    assert error.status_code == 403
    assert (error.type, error.code) == ("permission_error", "insufficient_scope")
    assert "'chat'" in error.message


def test_raises_not_found_error_on_404(client: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client.models.retrieve("emperor")
    assert caught.value.status_code == 404
    assert caught.value.type == "invalid_request_error"


def test_raises_rate_limit_error_on_429() -> None:
    limited = client_for(os.environ["EURUS_LIMIT_KEY"])
    # 1,000,000 tokens a minute: reserving 190,000 completion tokens a call runs out on the sixth.
    error = None
    for _ in range(8):
        try:
            limited.chat.completions.create(
                model="king",
                messages=[{"role": "user", "content": "hi"}],
                max_completion_tokens=190_000,
            )
        except openai.RateLimitError as e:
            error = e
            break
    assert error is not None, "no 429 within 8 calls"
    assert error.status_code == 429
    assert (error.type, error.code) == ("rate_limit_error", "rate_limit_exceeded")
    headers = error.response.headers
    assert int(headers["retry-after"]) >= 1
    assert int(headers["retry-after-ms"]) > 0
    assert headers["ratelimit-policy"] and headers["ratelimit"]


WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}


def test_responses_buffered_stored_and_deleted(client: OpenAI) -> None:
    response = client.responses.create(
        model="queen",
        instructions="You answer briefly.",
        input="Which trains cross the Brenner pass?",
    )
    assert response.object == "response"
    assert response.status == "completed"
    assert "Brenner" in response.output_text
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens
    assert client.responses.retrieve(response.id).output_text == response.output_text
    items = client.responses.input_items.list(response.id)
    assert [item.type for item in items.data] == ["message"]
    client.responses.delete(response.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(response.id)


def test_responses_stream_helper_parses_every_event(client: OpenAI) -> None:
    with client.responses.stream(model="prince", input="Summarise the rules of pétanque.") as stream:
        types = [event.type for event in stream]
        final = stream.get_final_response()
    assert types[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert types[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert final.status == "completed"
    assert len(final.output_text) > 20


def test_responses_function_tool_round_trip(client: OpenAI) -> None:
    first = client.responses.create(
        model="queen", input="What is the weather in Lisbon right now?", tools=[WEATHER_TOOL]
    )
    calls = [item for item in first.output if item.type == "function_call"]
    assert [call.name for call in calls] == ["get_weather"]
    assert json.loads(calls[0].arguments) == {"city": "Lisbon"}
    second = client.responses.create(
        model="queen",
        previous_response_id=first.id,
        tools=[WEATHER_TOOL],
        input=[
            {
                "type": "function_call_output",
                "call_id": calls[0].call_id,
                "output": json.dumps({"temperature_c": 19, "conditions": "sunny"}),
            }
        ],
    )
    assert "conditions sunny" in second.output_text


def test_responses_take_output_parts_reasoning_and_item_references(client: OpenAI) -> None:
    first = client.responses.create(
        model="queen", input="What is the weather in Lisbon right now?", tools=[WEATHER_TOOL]
    )
    call = next(item for item in first.output if item.type == "function_call")
    # the result as text parts, as the Agents SDK sends an MCP tool's result, after a reasoning
    # item passed back and the earlier call by reference
    second = client.responses.create(
        model="queen",
        tools=[WEATHER_TOOL],
        input=[
            {"role": "user", "content": "What is the weather in Lisbon right now?"},
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Ask the tool."}]},
            {"type": "item_reference", "id": call.id},
            {
                "type": "function_call_output",
                "call_id": call.call_id,
                "output": [{"type": "input_text", "text": json.dumps({"temperature_c": 19, "conditions": "sunny"})}],
            },
        ],
    )
    assert "conditions sunny" in second.output_text
    kept = list(client.responses.input_items.list(second.id, order="asc"))
    assert [item.type for item in kept] == ["message", "reasoning", "function_call", "function_call_output"]
    assert kept[2].id == call.id


def test_responses_name_an_item_type_they_do_not_take(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as err:
        client.responses.create(
            model="queen",
            input=[
                {"role": "user", "content": "Take a screenshot."},
                {"type": "computer_call_output", "call_id": "call_1", "output": {"type": "computer_screenshot", "image_url": "https://example.com/s.png"}},
            ],
        )
    assert err.value.code == "validation_failed"
    assert err.value.param == "input[1]"
    assert "input[1]: item type `computer_call_output` is not supported by this server" in err.value.message
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="queen", input=[{"type": "item_reference", "id": "msg_01JXNEVERST0REDANYWHERE000"}])


def test_conversations_and_a_response_that_continues_one(client: OpenAI) -> None:
    conversation = client.conversations.create(
        metadata={"topic": "whales"}, items=[{"role": "user", "content": "I plan a trip to the Azores."}]
    )
    assert conversation.id.startswith("conv_") and conversation.metadata == {"topic": "whales"}
    assert client.conversations.retrieve(conversation.id).id == conversation.id
    assert client.conversations.update(conversation.id, metadata={"topic": "dolphins"}).metadata == {"topic": "dolphins"}
    response = client.responses.create(model="queen", conversation=conversation.id, input="Which month is best?")
    assert response.conversation is not None and response.conversation.id == conversation.id
    items = list(client.conversations.items.list(conversation.id, order="asc", limit=1))
    assert [item.type for item in items] == ["message", "message", "message"]
    assert [item.role for item in items] == ["user", "user", "assistant"]
    added = client.conversations.items.create(conversation.id, items=[{"role": "user", "content": "Thanks."}])
    assert len(added.data) == 1
    assert client.conversations.items.retrieve(added.data[0].id, conversation_id=conversation.id).id == added.data[0].id
    client.conversations.items.delete(added.data[0].id, conversation_id=conversation.id)
    deleted = client.conversations.delete(conversation.id)
    assert deleted.deleted and deleted.object == "conversation.deleted"
    with pytest.raises(openai.NotFoundError):
        client.conversations.retrieve(conversation.id)


def test_responses_agents_with_the_hub_mcp_tool(client: OpenAI) -> None:
    response = client.responses.create(
        model="agents",
        input="Find three bakeries near Marienplatz in Munich",
        tools=[{"type": "mcp", "server_label": "eurus", "require_approval": "never"}],
    )
    assert response.status == "completed"
    assert [item.type for item in response.output] == ["mcp_list_tools", "mcp_call", "message"]
    call = response.output[1]
    assert call.name == "search_directory"
    assert json.loads(call.arguments)["near"] == "Marienplatz, Munich"
    results = json.loads(call.output)["results"]
    for hit in results:
        assert hit["name"] in response.output_text
    if not results:
        assert "no results" in response.output_text
    # two steps: the search, then the answer; 0.04 EUR each plus the tokens
    assert response.usage.model_extra["steps"] == 2
    assert float(response.usage.model_extra["cost_eur"]) > 0.08
    with client.responses.stream(
        model="agents",
        input="Find a bakery near München",
        tools=[{"type": "mcp", "server_label": "eurus", "allowed_tools": ["search_directory"]}],
    ) as stream:
        types = [event.type for event in stream]
        final = stream.get_final_response()
    assert "response.mcp_call.completed" in types
    assert [item.type for item in final.output] == ["mcp_list_tools", "mcp_call", "message"]


def test_responses_background_polled_until_completed(client: OpenAI) -> None:
    import time

    queued = client.responses.create(
        model="queen",
        input="What are the best months to visit the Azores for whale watching?",
        background=True,
    )
    assert queued.status == "queued"
    assert queued.background is True
    response = queued
    for _ in range(200):
        if response.status not in ("queued", "in_progress"):
            break
        time.sleep(0.1)
        response = client.responses.retrieve(queued.id)
    assert response.status == "completed"
    assert response.output_text
    events = list(client.responses.retrieve(queued.id, stream=True, starting_after=0))
    assert events[0].sequence_number == 1
    assert events[-1].type == "response.completed"


# Media (issue 19): images, speech, transcriptions and realtime through the Python SDK.

SENTENCE = "Please call me tomorrow morning. I would like to book a table for two people at seven."


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_images_generate_b64_json_and_url(client: OpenAI) -> None:
    import base64
    import urllib.request

    answer = client.images.generate(model="imagine", prompt="A harbour at sunrise", size="512x512", response_format="b64_json")
    assert png_size(base64.b64decode(answer.data[0].b64_json)) == (512, 512)
    linked = client.images.generate(prompt="A forest at night", size="256x256", n=2)
    assert len(linked.data) == 2
    with urllib.request.urlopen(linked.data[0].url) as response:  # signed: no key needed
        assert response.headers["content-type"] == "image/png"
        assert png_size(response.read()) == (256, 256)


def test_speech_streamed_to_a_file_and_transcribed_back(client: OpenAI, tmp_path) -> None:
    target = tmp_path / "speech.wav"
    with client.audio.speech.with_streaming_response.create(
        model="voice", voice="alloy", input=SENTENCE, response_format="wav"
    ) as response:
        assert response.headers["content-type"] == "audio/wav"
        response.stream_to_file(target)
    data = target.read_bytes()
    assert data[:4] == b"RIFF" and int.from_bytes(data[24:28], "little") == 24000
    seconds = (len(data) - 44) / 2 / 24000
    assert seconds > 3

    with target.open("rb") as audio:
        result = client.audio.transcriptions.create(model="voice", file=audio)
    said = set(SENTENCE.lower().replace(".", "").split())
    heard = set(result.text.lower().replace(".", "").split())
    assert len(said & heard) / len(said) >= 0.6
    assert result.usage.type == "duration"
    assert math.isclose(result.usage.seconds, seconds, abs_tol=0.01)

    with target.open("rb") as audio:
        verbose = client.audio.transcriptions.create(
            model="voice", file=audio, response_format="verbose_json", timestamp_granularities=["word", "segment"]
        )
    assert verbose.language == "english"
    assert len(verbose.words) > 5 and len(verbose.segments) > 0
    with target.open("rb") as audio:
        srt = client.audio.transcriptions.create(model="voice", file=audio, response_format="srt")
    assert isinstance(srt, str) and srt.startswith("1\n00:00:")
    with target.open("rb") as audio:
        vtt = client.audio.transcriptions.create(model="voice", file=audio, response_format="vtt")
    assert isinstance(vtt, str) and vtt.startswith("WEBVTT")
    with target.open("rb") as audio:
        text = client.audio.transcriptions.create(model="voice", file=audio, response_format="text")
    assert isinstance(text, str) and len(said & set(text.lower().replace(".", "").split())) / len(said) >= 0.6


def test_realtime_session_through_the_sdk_client(client: OpenAI) -> None:
    speech = client.audio.speech.create(model="voice", voice="alloy", input=SENTENCE, response_format="pcm")
    pcm = speech.read()
    events = []
    with client.realtime.connect(model="voice") as connection:
        connection.session.update(
            session={"type": "realtime", "instructions": "Answer in one sentence.", "audio": {"output": {"voice": "coral"}}}
        )
        for i in range(0, len(pcm), 24000):
            connection.input_audio_buffer.append(audio=base64.b64encode(pcm[i : i + 24000]).decode())
        connection.input_audio_buffer.commit()
        connection.response.create()
        for event in connection:
            events.append(event)
            assert event.type != "error", event
            if event.type == "response.done":
                break
    types = [e.type for e in events]
    assert types[0] == "session.created" and "session.updated" in types
    heard = next(e for e in events if e.type == "conversation.item.input_audio_transcription.completed")
    said = set(SENTENCE.lower().replace(".", "").split())
    assert len(said & set(heard.transcript.lower().replace(".", "").split())) / len(said) >= 0.6
    spoken = b"".join(base64.b64decode(e.delta) for e in events if e.type == "response.output_audio.delta")
    assert len(spoken) > 24000  # more than half a second spoken back
    done = events[-1]
    assert done.response.status == "completed"
    assert done.response.usage.total_tokens > 0
    assert math.isclose(done.response.usage.model_extra["audio_seconds"], len(spoken) / 2 / 24000, abs_tol=0.001)


def test_transcription_of_a_text_file_is_a_bad_request(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.audio.transcriptions.create(model="voice", file=("notes.wav", b"not audio at all\n"))
    assert raised.value.code == "unsupported_audio_format"
