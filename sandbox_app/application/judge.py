"""Judged answers, the call: a judge model (any backend kind, made by the registry like a
lane's) asked to grade one answer against a rubric, its reply read by core/results/judging.py.

One user message, the judge's prompt filled; ``StreamParams`` from the judge's own settings.
An OpenAI-compatible judge is asked for structured output (``response_format`` with
judging.VERDICT_SCHEMA, sent as a request extra); a server that refuses it is asked again in
text, and not asked for it again while this judge lives. With a cache folder (``eval
--cache``) each request goes through backends/transport/response_cache.py's ``CachedBackend``:
keyed by
the whole request (the prompt, the model, every parameter) and the judge's repeat, so a
rerun asks the server nothing it was asked before. The offline model plays a judge from
written verdicts (``JudgeSpec.replies``, a case's ``judge_replies``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path

from sandbox_app.backends.catalogue.keys import KeyStore, UrlSource
from sandbox_app.backends.chat_completions import openai_kind
from sandbox_app.backends.registry import BackendConfig, config_for, make_backend
from sandbox_app.backends.transport.response_cache import CachedBackend
from sandbox_app.core.results.checks import CheckResult
from sandbox_app.core.results.eval_result import JudgeUsage
from sandbox_app.core.results.judging import (
    VERDICT_SCHEMA,
    Verdict,
    fill_prompt,
    judge_check,
    parse_verdict,
    unjudged,
)
from sandbox_app.core.running.backend import Backend, BackendError, Message, stream_params
from sandbox_app.core.scenarios.judge_spec import JudgeSpec
from sandbox_app.core.scenarios.run_input import RunInput, Script
from sandbox_app.core.scenarios.scenario import Scenario

DEFAULT_MAX_TOKENS = 512  # a verdict and a sentence; a thinking judge may need its own


@dataclass
class Judged:
    """One answer's judgement: the check and what the judge's requests cost."""

    check: CheckResult
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    verdicts: list[Verdict] = field(default_factory=list)

    def usage(self) -> JudgeUsage:
        """What a result's ``judge`` holds: the judge's tokens and cost (None: no price)."""
        return JudgeUsage(self.tokens_in, self.tokens_out, self.cost)


class Judge:
    """Grades answers by ``spec``; one client for a server judge, closed by :meth:`aclose`."""

    def __init__(
        self,
        spec: JudgeSpec,
        keys: KeyStore,
        cache: Path | None = None,
        url_source: UrlSource = "file",
        timeout_s: float = 60.0,
    ) -> None:
        self.spec = spec
        self.keys = keys
        self.cache = cache
        # Raises ValueError (one line naming the known ids) for an unknown backend.
        self.config: BackendConfig = spec_config(spec, url_source, timeout_s)
        self.structured = self.config.kind.id == openai_kind.KIND.id
        self._server: Backend | None = None

    async def grade(self, values: Mapping[str, str], own_replies: Sequence[str] = ()) -> Judged:
        """Judge one answer (``values``: question, answer, expected, rubric, trajectory)
        ``repeats`` times; ``own_replies``: the case's own offline verdicts."""
        prompt = fill_prompt(self.spec.prompt, values)
        judged = Judged(CheckResult("judge", None))
        for repeat in range(self.spec.repeats):
            verdict, usage = await self._ask(prompt, repeat, own_replies)
            judged.verdicts.append(verdict)
            judged.tokens_in += usage[0]
            judged.tokens_out += usage[1]
        judged.check = judge_check(judged.verdicts)
        if self.spec.price is not None:
            per_in, per_out = self.spec.price
            judged.cost = (judged.tokens_in * per_in + judged.tokens_out * per_out) / 1e6
        return judged

    async def aclose(self) -> None:
        if self._server is not None:
            await self._server.aclose()
            self._server = None

    async def _ask(
        self, prompt: str, repeat: int, own_replies: Sequence[str]
    ) -> tuple[Verdict, tuple[int, int]]:
        messages: list[Message] = [{"role": "user", "content": prompt}]
        try:
            # Its own settings, as a lane's: one its kind cannot send is never sent without.
            self.config.kind.check_settings(self.spec.settings)
            backend = self._backend(prompt, repeat, own_replies)
        except Exception as err:  # a judge that cannot be made: unjudged, the evaluation on
            return unjudged(f"judge not asked: {err or type(err).__name__}"), (0, 0)
        try:
            if self.structured:
                try:
                    return await self._reply(backend, messages, repeat, structured=True)
                except BackendError:
                    # Refused (a 400 on response_format) or not: asked once more in text, and
                    # in text from now on; a real failure fails again below, unjudged.
                    self.structured = False
            return await self._reply(backend, messages, repeat, structured=False)
        except BackendError as err:
            return unjudged(f"the judge failed: {err}"), (0, 0)
        except Exception as err:  # any other failure: this answer unjudged, the evaluation on
            return unjudged(f"the judge failed: {type(err).__name__}: {err}"), (0, 0)

    async def _reply(
        self, backend: Backend, messages: list[Message], repeat: int, *, structured: bool
    ) -> tuple[Verdict, tuple[int, int]]:
        settings = self.spec.settings
        if settings.temperature is None:  # a judge's verdict should not be a dice roll
            settings = settings.replace(temperature=0.0)
        extra = (("response_format", VERDICT_SCHEMA),) if structured else ()
        params = stream_params(
            settings, self.config.model, settings.max_tokens or DEFAULT_MAX_TOKENS, extra=extra
        )
        if self.cache is not None:  # keyed by the whole request, and the judge's repeat
            salt = f"judge|{self.config.url}|{self.config.model}|judge repeat {repeat}"
            backend = CachedBackend(backend, self.cache, salt)
        text: list[str] = []
        tokens = (0, 0)
        async with aclosing(backend.stream(messages, params)) as stream:
            async for delta in stream:
                text.append(delta.text)
                if delta.usage is not None:
                    tokens = (delta.usage.prompt_tokens, delta.usage.completion_tokens)
        return parse_verdict("".join(text), self.spec.mode, self.spec.threshold), tokens

    def _backend(self, prompt: str, repeat: int, own_replies: Sequence[str]) -> Backend:
        if self.config.kind.server:  # one client: its connections reused answer after answer
            if self._server is None:
                self._server = make_backend(self.config, RunInput(question=prompt), self.keys)
            return self._server
        # The offline judge: this answer's verdict written for it, streamed at once.
        replies = tuple(own_replies) or self.spec.replies
        if not replies:
            raise BackendError(
                'the offline judge has no verdicts written (the judge\'s "replies" or a '
                'case\'s "judge_replies"); choose a judge model'
            )
        script = Script((replies[repeat % len(replies)],), tokens_per_second=0, question=prompt)
        # No prompt versions here: the judge's script is this answer's verdict alone.
        judged = RunInput(question=prompt, script=script)
        return make_backend(self.config, judged, self.keys)


def spec_config(spec: JudgeSpec, url_source: UrlSource, timeout_s: float = 60.0) -> BackendConfig:
    """What the judge runs against; a ValueError for an unknown backend id."""
    return config_for(spec.backend, spec.base_url, spec.model, timeout_s, url_source=url_source)


def judge_config(scenario: Scenario) -> BackendConfig | None:
    """The server the scenario's judge would be asked on, with its URL from the file: what the
    key rule must hear about before a window evaluation starts (its lanes' servers with it).
    None when nothing is judged (no rubric) or the backend id is unknown (every run then says
    "unjudged" and why)."""
    if not scenario.rubric and not any(case.rubric for case in scenario.test_set):
        return None
    try:
        return spec_config(scenario.judge or JudgeSpec(), "file")
    except ValueError:
        return None


def judge_values(
    question: str, answer: str, expected: str, rubric: str, trajectory: str = ""
) -> dict[str, str]:
    """What the judge's prompt is filled with; ``trajectory``: the run's steps, bounded
    (core/results/judging.py ``trajectory_text``), so the judge grades the path too."""
    return {
        "question": question,
        "answer": answer,
        "expected": expected,
        "rubric": rubric,
        "trajectory": trajectory,
    }
