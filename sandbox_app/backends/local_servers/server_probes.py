"""Which local server answers at a URL, and what it says about a model, from its own endpoints.

Each probe asks one server's native API (the shapes in their docs) and returns
:class:`ServerFacts`, or None when the answers are not that server's:

- Ollama: ``GET /api/version``; ``POST /api/show {"model"}`` (404 for a model not pulled;
  ``capabilities``: "completion", "tools", "thinking", "vision"; ``model_info``'s
  ``<arch>.context_length`` is the model's maximum); ``GET /api/ps`` (the loaded models, each
  with the ``context_length`` it was loaded with: the context served now).
- LM Studio: ``GET /api/v0/models``: each model's ``state`` ("loaded" / "not-loaded"),
  ``type`` ("llm", "vlm", "embeddings"), ``max_context_length``, ``loaded_context_length``
  when loaded, ``capabilities`` (["tool_use"]).
- llama.cpp: ``GET /health`` (503 ``{"error": {"message": "Loading model"}}`` while it
  loads); ``GET /props``: ``default_generation_settings.n_ctx`` (a slot's context),
  ``model_path``, ``modalities.vision``, ``chat_template_caps.supports_tools``.
- vLLM: ``GET /v1/models``, whose models carry ``max_model_len`` (``owned_by`` "vllm").
- any other OpenAI-compatible server: its ``/v1/models`` list.

A new server: a probe here, added to :data:`PROBES` before the ones its answers would also
pass (the tests' emulation in tests/model_server/local.py shows each shape).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from sandbox_app.core.untrusted.file_reader import parse_json_text

ServerKind = Literal["ollama", "lmstudio", "llamacpp", "vllm", "other"]
ModelState = Literal["loaded", "present", "missing", "unknown"]
SERVER_NAMES: dict[ServerKind, str] = {
    "ollama": "Ollama",
    "lmstudio": "LM Studio",
    "llamacpp": "llama.cpp",
    "vllm": "vLLM",
    "other": "The server",
}


@dataclass(frozen=True)
class ServerFacts:
    """What a server said: which one it is, and about the model asked for."""

    kind: ServerKind
    version: str = ""
    loading: bool = False  # up, but still loading its model (llama.cpp's 503)
    models: tuple[str, ...] = ()  # what it has (Ollama: only asked when the model is missing)
    model_state: ModelState = "unknown"
    served_model: str = ""  # the model it serves, when it serves one whatever is asked
    served_context: int | None = None  # the context a request gets now
    max_context: int | None = None  # the model's own maximum
    capabilities: frozenset[str] | None = None  # None: the server does not say
    model_type: str = ""  # LM Studio's "embeddings" cannot chat
    wants_key: bool = False  # /v1/models answered 401/403


MAX_ANSWER = 64_000_000  # bytes (and characters) of one answer read and parsed
MAX_CONTEXT = 100_000_000  # tokens: ten times the longest context any model serves


class Answer:
    """One HTTP answer: its status and its JSON (None when the body is not JSON)."""

    def __init__(self, status: int, body: bytes, cut: bool = False) -> None:
        self.status = status
        self.cut = cut  # more than MAX_ANSWER came: not read (its start is no JSON)
        try:  # by the file reader's rules: a body nested 100,000 deep is no JSON, no crash
            text = body.decode("utf-8", "replace")
            self.json: Any = parse_json_text(text, "the answer", MAX_ANSWER) if body else None
        except ValueError:
            self.json = None

    @property
    def ok(self) -> bool:
        return self.status == 200

    def dict(self) -> dict[str, Any]:
        return self.json if isinstance(self.json, dict) else {}


# ``get(path)`` / ``post(path, body)`` on the server's root (its URL without /v1).
Get = Callable[[str], Awaitable[Answer]]
Post = Callable[[str, dict[str, Any]], Awaitable[Answer]]


@dataclass
class Http:
    get: Get
    post: Post
    model: str  # the model asked about ("": none chosen)


def _int(value: Any) -> int | None:
    """A context length as a server reports it: a whole number of tokens up to
    :data:`MAX_CONTEXT`; anything else (10^30, -1, "4096") is not believed: unknown."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_CONTEXT:
        return value
    return None


def _names(items: Any, key: str) -> tuple[str, ...]:
    if not isinstance(items, list):
        return ()
    return tuple(str(m[key]) for m in items if isinstance(m, dict) and isinstance(m.get(key), str))


def _same_ollama_model(name: str, wanted: str) -> bool:
    """A name without a tag is the ":latest" one to Ollama ("qwen3" is "qwen3:latest")."""
    full = wanted if ":" in wanted else f"{wanted}:latest"
    return name in (wanted, full)


async def ollama(http: Http) -> ServerFacts | None:
    version = await http.get("/api/version")
    if not (version.ok and isinstance(version.dict().get("version"), str)):
        return None
    facts: dict[str, Any] = {"kind": "ollama", "version": version.dict()["version"]}
    if not http.model:
        tags = await http.get("/api/tags")
        return ServerFacts(**facts, models=_names(tags.dict().get("models"), "name"))
    show = await http.post("/api/show", {"model": http.model})
    if show.status == 404:
        tags = await http.get("/api/tags")
        models = _names(tags.dict().get("models"), "name")
        return ServerFacts(**facts, model_state="missing", models=models)
    info = show.dict().get("model_info")
    if isinstance(info, dict):
        facts["max_context"] = next(
            (_int(v) for k, v in info.items() if k.endswith(".context_length") and _int(v)), None
        )
    caps = show.dict().get("capabilities")
    if isinstance(caps, list):
        facts["capabilities"] = frozenset(str(c) for c in caps)
    ps = await http.get("/api/ps")
    running = ps.dict().get("models")
    loaded = next(
        (
            m
            for m in (running if isinstance(running, list) else [])
            if isinstance(m, dict) and _same_ollama_model(str(m.get("name", "")), http.model)
        ),
        None,
    )
    if loaded is None:
        return ServerFacts(**facts, model_state="present")
    return ServerFacts(
        **facts, model_state="loaded", served_context=_int(loaded.get("context_length"))
    )


async def lmstudio(http: Http) -> ServerFacts | None:
    answer = await http.get("/api/v0/models")
    if answer.ok and answer.cut:  # a list larger than any read: a server, its models unread
        return ServerFacts("other")
    data = answer.dict().get("data")
    if not (answer.ok and isinstance(data, list)):
        return None
    entries = [m for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]
    if not entries or not all("state" in m for m in entries):
        return None  # another server's list (LM Studio's entries always carry a state)
    models = tuple(str(m["id"]) for m in entries)
    if not http.model:
        return ServerFacts("lmstudio", models=models)
    mine = next((m for m in entries if m["id"] == http.model), None)
    if mine is None:
        return ServerFacts("lmstudio", models=models, model_state="missing")
    caps: set[str] = set()
    listed = mine.get("capabilities")
    if isinstance(listed, list) and "tool_use" in listed:
        caps.add("tools")
    if mine.get("type") == "vlm":
        caps.add("vision")
    loaded = mine.get("state") == "loaded"
    return ServerFacts(
        "lmstudio",
        models=models,
        model_state="loaded" if loaded else "present",
        served_context=_int(mine.get("loaded_context_length")) if loaded else None,
        max_context=_int(mine.get("max_context_length")),
        capabilities=frozenset(caps) if isinstance(listed, list) else None,
        model_type=str(mine.get("type", "")),
    )


async def llamacpp(http: Http) -> ServerFacts | None:
    health = await http.get("/health")
    error = health.dict().get("error")
    if (
        health.status == 503
        and isinstance(error, dict)
        and "loading" in str(error.get("message", "")).casefold()
    ):
        return ServerFacts("llamacpp", loading=True)
    if not health.ok:
        return None
    props = await http.get("/props")
    settings = props.dict().get("default_generation_settings")
    if not (props.ok and isinstance(settings, dict)):
        return None  # /health alone: vLLM answers it too
    path = str(props.dict().get("model_path", ""))
    caps: set[str] = set()
    modalities = props.dict().get("modalities")
    if isinstance(modalities, dict) and modalities.get("vision"):
        caps.add("vision")
    template_caps = props.dict().get("chat_template_caps")
    if isinstance(template_caps, dict) and (
        template_caps.get("supports_tools") or template_caps.get("supports_tool_calls")
    ):
        caps.add("tools")
    listed = await http.get("/v1/models")
    data = listed.dict().get("data")
    first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
    meta = first.get("meta") if isinstance(first.get("meta"), dict) else {}
    return ServerFacts(
        "llamacpp",
        version=str(props.dict().get("build_info", "")),
        # One model, whatever name a request gives (single-model llama-server).
        model_state="loaded",
        served_model=str(first.get("id") or path.replace("\\", "/").rsplit("/", 1)[-1]),
        served_context=_int(settings.get("n_ctx")),
        max_context=_int(meta.get("n_ctx_train")) if isinstance(meta, dict) else None,
        capabilities=frozenset(caps) if isinstance(template_caps, dict) else None,
    )


async def openai_list(http: Http) -> ServerFacts | None:
    """vLLM (its models carry ``max_model_len``) or any other server with a model list."""
    answer = await http.get("/v1/models")
    if answer.status in (401, 403):
        return ServerFacts("other", wants_key=True)
    if answer.ok and answer.cut:  # a list larger than any read: a server, its models unread
        return ServerFacts("other")
    data = answer.dict().get("data")
    if not (answer.ok and isinstance(data, list)):
        return None
    entries = [m for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]
    models = tuple(str(m["id"]) for m in entries)
    vllm = any("max_model_len" in m or m.get("owned_by") == "vllm" for m in entries)
    kind: ServerKind = "vllm" if vllm else "other"
    if not http.model:
        return ServerFacts(kind, models=models)
    mine = next((m for m in entries if _listed_as(http.model, m)), None)
    if mine is None:
        return ServerFacts(kind, models=models, model_state="missing")
    # vLLM holds every model it serves loaded, with the window --max-model-len gave it (the
    # model's own maximum is not listed). Any other server's list says a model is there,
    # not whether it is loaded ("listed"): llama-cpp-python loads its first one at start.
    served = _int(mine.get("max_model_len"))
    return ServerFacts(
        kind,
        models=models,
        model_state="loaded" if vllm else "unknown",
        served_context=served,
    )


def _listed_as(wanted: str, entry: dict[str, Any]) -> bool:
    """Whether a model list's ``entry`` is the model asked for: its id, vLLM's ``root``, or,
    for an id that is a file's path (llama-cpp-python and llama-server list the path they
    were started with unless given an alias, tests/data/llama_cpp_models.json), the file's
    name with or without ".gguf"."""
    model_id = str(entry["id"])
    if wanted in (model_id, entry.get("root")):
        return True
    name = model_id.replace("\\", "/").rsplit("/", 1)[-1]
    return name != model_id and wanted.casefold() in (
        name.casefold(),
        name.casefold().removesuffix(".gguf"),
    )


# Asked in this order; the first that recognises its server answers.
PROBES: tuple[Callable[[Http], Awaitable[ServerFacts | None]], ...] = (
    ollama,
    lmstudio,
    llamacpp,
    openai_list,
)


async def identify(http: Http) -> ServerFacts | None:
    """The first probe's facts that recognises the server; None if nothing does."""
    for probe in PROBES:
        facts = await probe(http)
        if facts is not None:
            return facts
    return None
