"""The one script model every kind of the test server plays (tests/model_server/).

A :class:`ModelScript` says how one model answers, whatever API it is asked through: its
replies, chosen by the turn a request is at (how many assistant turns it already holds), and
the knobs of a server's behaviour (pacing, HTTP failures, broken streams, stop and token
limits). A reply is written as a model's raw output: thinking in a leading ``<think>…</think>``,
then the text, tool calls as Hermes-style ``<tool_call>{"name": …, "arguments": …}</tool_call>``
blocks (tests/model_server/chat_calls.py). Each kind's module encodes it in its own wire shape
(the thinking as reasoning chunks, a thinking block, thought parts, Ollama's ``thinking``…).

The plan of a reply (:func:`plan_reply`) is worked out before the first byte: stop strings
applied, thinking split off, tokens cut by :func:`tokenize` (a token is a stream chunk), the
token limit applied.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tests.model_server.chat_calls import ToolCallStyle, split_calls
from tests.model_server.passback import PassbackMode

if TYPE_CHECKING:
    from tests.model_server.chat import UnsupportedParam

ChunkStyle = Literal["deepseek", "sparse", "openrouter"]

# Punctuation the ReAct format leans on is a token of its own; everything else is
# split into word-ish pieces that carry their leading whitespace, like BPE tokens do.
# Every position matches one of the alternatives, so the pieces rebuild the text.
_PUNCT = r"[\[\]\(\),:]"
_TOKEN_RE = re.compile(rf"\s*{_PUNCT}|\s*\S+?(?=\s|$|{_PUNCT})|\s+")


def tokenize(text: str) -> list[str]:
    """Split ``text`` into small deterministic tokens; ``"".join(tokenize(t)) == t``."""
    return _TOKEN_RE.findall(text)


def split_every(n: int) -> Callable[[str], list[str]]:
    """A tokenizer that cuts text into ``n``-character pieces (the last may be shorter).

    For awkward chunk boundaries: ``split_every(4)`` streams ``"<think>hi"`` as
    ``"<thi"``, ``"nk>h"``, ``"i"``, so a client has to reassemble the tag.
    """
    if n < 1:
        raise ValueError(f"split_every needs n >= 1, not {n}")

    def split(text: str) -> list[str]:
        return [text[i : i + n] for i in range(0, len(text), n)]

    return split


@dataclass
class ModelScript:
    """How one fake model answers. See the module docstring and field comments."""

    # Reply for a request = replies[number of assistant messages already in it].
    replies: list[str] = field(default_factory=list)
    # Past the end of ``replies``: wrap around (True) or answer 400 "exhausted".
    cycle: bool = False
    # Different replies per conversation (repeated runs): conversation k, counted by the
    # requests with no assistant turn yet, uses runs[k % len(runs)] instead of ``replies``.
    runs: list[list[str]] | None = None
    # Replies per question (the conversation's first user message), for runs that arrive in
    # any order (a test set run concurrently); a question not in it uses the above.
    by_question: dict[str, list[str]] | None = None
    # Replies worked out from the request's messages (a model whose answers depend on the
    # prompt's words: tests/model_server/optimizer.py); None: the above. Called for each request.
    responder: Callable[[list[Any]], list[str]] | None = None
    # Tokens (SSE chunks) per second; None = as fast as the socket takes them.
    rate: float | None = None
    # Cut the reply at the earliest ``stop`` string of the request.
    honor_stop: bool = True
    # Cut the reply at the request's max_tokens (False: a server that ignores the limit).
    honor_max_tokens: bool = True
    # Fail the first ``fail_times`` requests (None = all) with this HTTP status.
    fail_status: int | None = None
    fail_times: int | None = None
    retry_after: float | None = None
    fail_message: str | None = None
    fail_code: str | None = None  # the error's code (None: the status's usual one)
    # Broken streams: each counts content chunks already sent.
    cut_after: int | None = None  # then abort the TCP connection
    malformed_after: int | None = None  # then one ``data: {this is not json`` line
    bad_bytes_after: int | None = None  # then one chunk with invalid UTF-8 content
    stall_after: int | None = None  # then send nothing more, ever
    # Prompt tokens the server says it read from its cache (each kind's usage field for it).
    cached_tokens: int = 0
    # Prompt tokens the server says it wrote to its cache (Anthropic reports them).
    cache_write_tokens: int = 0
    # The reply's end reason, sent as it is in the kind's words (Gemini's "SAFETY", Anthropic's
    # "refusal", Ollama's "length", Responses' "failed"); None: the natural one.
    finish: str | None = None
    # Seconds between the response headers and the first chunk.
    delay_first: float = 0.0
    # Cuts text into tokens (= SSE chunks); see ``tokenize`` and ``split_every``.
    tokenizer: Callable[[str], list[str]] = tokenize

    # ---- thinking models -------------------------------------------------------------
    # Where the reply's thinking goes. The thinking is the text before the first
    # ``</think>`` (or ``</thinking>``), after an optional leading ``<think>``/``<thinking>``;
    # a reply that opens a tag and never closes it is all thinking, one with no tags at all
    # has none. None: everything raw in ``content``, tags and all (reasoning_format none).
    # "reasoning_content" (DeepSeek, llama.cpp, vLLM <= 0.10) or "reasoning" (vLLM >= 0.11,
    # Ollama, OpenRouter): the thinking, tags stripped, streamed in ``delta.<field>`` chunks,
    # then the rest in ``delta.content`` chunks; non-streaming, ``message.<field>``. Each part
    # is tokenized on its own, so no chunk mixes the two.
    reasoning_field: Literal["reasoning_content", "reasoning"] | None = None
    # The delta shape when ``reasoning_field`` is set; None = "deepseek" for
    # "reasoning_content", "sparse" for "reasoning".
    # "deepseek": both keys always, the idle one null: {"content":null,"reasoning_content":"x"}
    #   then {"content":"x","reasoning_content":null}; finish delta {"content":"",…:null}.
    # "sparse": only the key in use, {"reasoning_content":"x"} (llama.cpp) or
    #   {"reasoning":"x"} (vLLM), then {"content":"x"}.
    # "openrouter": role on every chunk, {"role":"assistant","content":"","reasoning":"x",
    #   "reasoning_details":[{"type":"reasoning.text","text":"x","format":"unknown",
    #   "index":0}]} then {"role":"assistant","content":"x","reasoning":null,
    #   "reasoning_details":[]}.
    chunk_style: ChunkStyle | None = None
    # OpenAI o-series: this many reasoning tokens are "generated" before the reply but never
    # sent; they count in usage (and against max_completion_tokens, first).
    hidden_reasoning_tokens: int = 0
    # When the reply has thinking (or hidden reasoning), usage carries
    # completion_tokens_details.reasoning_tokens (OpenAI, DeepSeek, OpenRouter); False for a
    # server that does not (llama.cpp). completion_tokens always counts reasoning + content.
    report_reasoning_tokens: bool = True
    # ``stop`` and ``max_tokens`` apply to the raw reply, thinking included (llama.cpp,
    # Ollama, vLLM V1). True: stop strings are only looked for after ``</think>``
    # (vLLM PR #14550); max_tokens still counts the thinking.
    stop_skips_reasoning: bool = False
    # Request parameters answered with a 400 (see OPENAI_REASONING_REJECTS), checked in
    # order; the first one present in the body is reported. Counted in stats "errors".
    reject_params: tuple[UnsupportedParam, ...] = ()

    # ---- native tool calling (tests/model_server/chat_calls.py) ------------------------------
    # When the request has "tools": how a reply's <tool_call> blocks are streamed as
    # delta.tool_calls; None: a server without a tool parser (the blocks stay in content).
    tool_call_style: ToolCallStyle | None = "openai"
    # Replies to requests that carry "tools", as a model answers when given them; None:
    # ``replies`` either way.
    native_replies: list[str] | None = None
    # (status, message) for any request with "tools": a model or server that cannot call
    # them (chat_calls.OLLAMA_NO_TOOLS, LLAMA_CPP_NO_JINJA, VLLM_NO_TOOL_PARSER).
    rejects_tools: tuple[int, str] | None = None
    # The streamed reply's usage object, sent as it is instead of the counted one (a server
    # that reports nonsense: negative, huge or non-numeric counts).
    usage: dict[str, Any] | None = None
    # False: a stream with no usage at all, whatever stream_options asks (llama-cpp-python's
    # server: abetlen/llama-cpp-python#1082, #1640).
    sends_usage: bool = True
    # A server that requires a reply's reasoning back in a tool-calling turn and answers 400
    # without it (tests/model_server/passback.py: "deepseek", "kimi", "gemini", "openrouter"); a
    # tool-calling reply's leading <think> block streams in that server's shape.
    passback: PassbackMode | None = None
    # Hold each passback refusal until this many are held (at most 5 s), then answer them
    # together: that many runs' requests were in flight when the first 400 came (eval's
    # concurrency), none of them yet knowing what the others learn from it.
    refusals_together: int = 0
    # ---- a small context window (the context meter, core/running/context_meter.py) ---
    # A server whose context holds this many tokens (``tokenize``'s): a longer prompt is cut
    # silently, keeping only the last messages that fit, and its prompt_tokens is the window
    # itself, as Ollama reports prompt_eval_count == num_ctx when it truncated (Ollama's
    # server/prompt.go drops the oldest messages; llm/server.go reports the evaluated count).
    # The messages it kept are in ModelServer.kept. None: no limit.
    context_length: int | None = None


def message_tokens(message: Any) -> int:
    content = message.get("content") if isinstance(message, dict) else None
    return len(tokenize(content)) if isinstance(content, str) else 0


def cut_to_context(messages: list[Any], limit: int) -> list[Any]:
    """The last messages whose tokens fit in ``limit`` (ModelScript.context_length)."""
    kept: list[Any] = []
    room = limit
    for message in reversed(messages):
        room -= message_tokens(message)
        if room < 0:
            break
        kept.insert(0, message)
    return kept


def prompt_tokens(messages: list[Any]) -> int:
    chars = 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    chars += len(part["text"])
    return chars // 4 + 1


def apply_stop(text: str, stop: Any) -> str:
    """Cut ``text`` before the earliest occurrence of any stop string, as OpenAI does."""
    stops = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    cut = min(
        (i for s in stops if isinstance(s, str) and s and (i := text.find(s)) >= 0),
        default=-1,
    )
    return text[:cut] if cut >= 0 else text


_OPEN_THINK_RE = re.compile(r"\s*<(think|thinking)>")
_CLOSE_TAGS = ("</think>", "</thinking>")


def find_thinking(text: str) -> tuple[int, int, int] | None:
    """Where the thinking of a raw reply is: ``(start, end, after)`` with the thinking
    ``text[start:end]`` (tags excluded) and the answer ``text[after:]``; None if it has none.

    Opened by a leading ``<think>``/``<thinking>``: thinking up to the matching close tag,
    or to the end if it never closes (vLLM's deepseek_r1 parser). Not opened (a template
    that pre-opens the tag): thinking up to the first ``</think>``/``</thinking>``, if any.
    """
    opened = _OPEN_THINK_RE.match(text)
    if opened is not None:
        start = opened.end()
        close = f"</{opened.group(1)}>"
        end = text.find(close, start)
        if end < 0:
            return start, len(text), len(text)
        return start, end, end + len(close)
    closes = [(i, tag) for tag in _CLOSE_TAGS if (i := text.find(tag)) >= 0]
    if not closes:
        return None
    end, tag = min(closes)
    return 0, end, end + len(tag)


@dataclass(slots=True)
class Plan:
    """What to send for one request, worked out before the first byte."""

    tokens: list[str]  # streamed chunks: the first ``reasoning_chunks`` in the reasoning field
    reasoning_chunks: int
    finish_reason: str
    completion_tokens: int  # hidden + streamed tokens
    reasoning_tokens: int | None  # for usage.completion_tokens_details; None = no details


def plan_reply(script: ModelScript, reply: str, stop: Any, limit: Any) -> Plan:
    """Apply stop, split the thinking off, tokenize, apply the token limit.

    Stop cuts the raw reply (unless ``stop_skips_reasoning``, then only the answer after the
    thinking); the limit counts hidden reasoning, then thinking, then answer tokens.
    """
    if stop is not None:
        span = find_thinking(reply) if script.stop_skips_reasoning else None
        if span is not None:
            reply = reply[: span[2]] + apply_stop(reply[span[2] :], stop)
        else:
            reply = apply_stop(reply, stop)
    span = find_thinking(reply)
    if span is not None and script.reasoning_field is not None:
        start, end, after = span
        thinking = script.tokenizer(reply[start:end])
        tokens = thinking + script.tokenizer(reply[after:])
        reasoning_chunks = thinking_tokens = len(thinking)
    else:
        tokens = script.tokenizer(reply)
        reasoning_chunks = thinking_tokens = 0
        if span is not None:  # raw: the tokens that start before the end of the thinking
            position = 0
            for token in tokens:
                if position >= span[2]:
                    break
                position += len(token)
                thinking_tokens += 1
    hidden = max(script.hidden_reasoning_tokens, 0)
    finish_reason = "stop"
    if isinstance(limit, int) and not isinstance(limit, bool) and hidden + len(tokens) > limit:
        limit = max(limit, 0)
        hidden = min(hidden, limit)
        tokens = tokens[: limit - hidden]
        reasoning_chunks = min(reasoning_chunks, len(tokens))
        thinking_tokens = min(thinking_tokens, len(tokens))
        finish_reason = "length"
    has_thinking = span is not None or script.hidden_reasoning_tokens > 0
    return Plan(
        tokens=tokens,
        reasoning_chunks=reasoning_chunks,
        finish_reason=finish_reason,
        completion_tokens=hidden + len(tokens),
        reasoning_tokens=(
            hidden + thinking_tokens if has_thinking and script.report_reasoning_tokens else None
        ),
    )


def usage_of(prompt_tokens: int, plan: Plan) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": plan.completion_tokens,
        "total_tokens": prompt_tokens + plan.completion_tokens,
    }
    if plan.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": plan.reasoning_tokens}
    return usage


def chunk_style(script: ModelScript) -> ChunkStyle:
    if script.chunk_style is not None:
        return script.chunk_style
    return "deepseek" if script.reasoning_field == "reasoning_content" else "sparse"


def choose_reply(
    script: ModelScript,
    step: int,
    question: str | None,
    messages: list[Any],
    conversation: int,
    tools: bool = False,
) -> str | None:
    """The reply for a request at turn ``step`` (None: the script is exhausted). ``question``:
    the conversation's first user message; ``conversation``: how many this model has begun
    before (ModelScript.runs); ``tools``: the request offers native tools."""
    replies = script.replies
    if tools and script.native_replies is not None:
        replies = script.native_replies
    if script.by_question is not None:
        replies = script.by_question.get(str(question), replies)
    if script.responder is not None:
        replies = script.responder(messages)
    if script.runs:
        replies = script.runs[conversation % len(script.runs)]
    if step < len(replies):
        return replies[step]
    if script.cycle and replies:
        return replies[step % len(replies)]
    return None


def reply_parts(reply: str) -> tuple[str, str, list[tuple[str, Any]]]:
    """A raw reply's thinking, text and tool calls (name, arguments as an object; a call's
    broken JSON arguments as their text), for the kinds that send them apart."""
    span = find_thinking(reply)
    thinking, rest = ("", reply) if span is None else (reply[span[0] : span[1]], reply[span[2] :])
    text, calls = split_calls(rest)
    return thinking, text, [(name, _arguments(arguments)) for name, arguments in calls]


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
