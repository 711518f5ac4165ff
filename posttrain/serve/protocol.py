"""The request bodies of the OpenAI API that the server takes, validated by pydantic.

Fields the API defines that the server cannot honour (`echo`, `suffix`, `logit_bias`, ...) are
refused with a 400 rather than silently ignored; unknown extra fields are ignored, as OpenAI's
servers do.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from posttrain.serve.api_errors import ApiError


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class FunctionDefinition(_Body):
    name: str = Field(min_length=1, max_length=64, pattern=r"^[a-zA-Z0-9_-]+$")
    description: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)


class Tool(_Body):
    type: Literal["function"] = "function"
    function: FunctionDefinition


class ToolCallFunction(_Body):
    name: str
    arguments: str


class ToolCallIn(_Body):
    id: str | None = None
    type: Literal["function"] = "function"
    function: ToolCallFunction


class TextPart(_Body):
    type: Literal["text"]
    text: str


class Message(_Body):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[TextPart] | None = None
    name: str | None = None
    tool_calls: list[ToolCallIn] | None = None
    tool_call_id: str | None = None

    @model_validator(mode="after")
    def _content_present(self) -> Message:
        if self.content is None and not (self.role == "assistant" and self.tool_calls):
            raise ValueError(f"a {self.role} message needs content")
        return self

    @property
    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(part.text for part in self.content)
        return self.content or ""


class _Sampling(_Body):
    model: str
    n: int = Field(1, ge=1, le=64)
    temperature: float = Field(1.0, ge=0.0, le=2.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    top_k: int = Field(0, ge=0)  # not OpenAI's; vLLM's, taken as it is
    max_tokens: int | None = Field(None, ge=1)
    stop: str | list[str] | None = None
    seed: int | None = None
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    logit_bias: dict[str, float] | None = None

    @field_validator("stop")
    @classmethod
    def _stops(cls, value: str | list[str] | None) -> str | list[str] | None:
        stops = [value] if isinstance(value, str) else value or []
        if len(stops) > 4 or any(not s for s in stops):
            raise ValueError("stop takes up to 4 non-empty strings")
        return value

    @model_validator(mode="after")
    def _unsupported(self) -> _Sampling:
        if self.presence_penalty or self.frequency_penalty:
            raise ValueError("presence_penalty and frequency_penalty are not supported by this server")
        if self.logit_bias:
            raise ValueError("logit_bias is not supported by this server")
        return self

    @property
    def stop_strings(self) -> tuple[str, ...]:
        return (self.stop,) if isinstance(self.stop, str) else tuple(self.stop or ())

    @property
    def include_usage(self) -> bool:
        return bool((self.stream_options or {}).get("include_usage"))


class ChatCompletionRequest(_Sampling):
    messages: list[Message] = Field(min_length=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    logprobs: bool = False
    top_logprobs: int | None = Field(None, ge=0, le=20)
    tools: list[Tool] | None = None
    tool_choice: Literal["none", "auto", "required"] | dict[str, Any] | None = None
    return_token_ids: bool = False  # vLLM's extension: the choices carry prompt and output token ids

    @model_validator(mode="after")
    def _tool_choice(self) -> ChatCompletionRequest:
        if self.top_logprobs and not self.logprobs:
            raise ValueError("top_logprobs needs logprobs=true")
        if isinstance(self.tool_choice, dict):
            name = (self.tool_choice.get("function") or {}).get("name")
            if not name or name not in {t.function.name for t in self.tools or []}:
                raise ValueError(f"tool_choice names a function that is not in tools: {name!r}")
        elif self.tool_choice == "required" and not self.tools:
            raise ValueError("tool_choice 'required' needs tools")
        return self

    @property
    def forced_function(self) -> str | None:
        return (self.tool_choice.get("function") or {}).get("name") if isinstance(self.tool_choice, dict) else None

    @property
    def tools_active(self) -> bool:
        return bool(self.tools) and self.tool_choice != "none"


class CompletionRequest(_Sampling):
    prompt: str | list[str] | list[int] | list[list[int]]
    logprobs: int | None = Field(None, ge=0, le=20)
    echo: bool = False
    suffix: str | None = None
    best_of: int | None = None
    return_token_ids: bool = False  # vLLM's extension: the choices carry prompt and output token ids

    @model_validator(mode="after")
    def _unsupported_completion(self) -> CompletionRequest:
        if self.echo:
            raise ValueError("echo is not supported by this server")
        if self.suffix:
            raise ValueError("suffix is not supported by this server")
        if self.best_of not in (None, 1, self.n):
            raise ValueError("best_of is not supported by this server")
        if isinstance(self.prompt, list) and not self.prompt:
            raise ValueError("prompt is empty")
        return self

    @property
    def prompts(self) -> list[str | list[int]]:
        """The prompts as texts or token-id lists."""
        prompt = self.prompt
        if isinstance(prompt, str):
            return [prompt]
        if all(isinstance(p, int) for p in prompt):
            return [list(prompt)]  # type: ignore[arg-type]
        return list(prompt)  # type: ignore[arg-type]


def check_max_tokens(body: _Sampling, max_model_len: int) -> None:
    """A reply longer than the model's whole context can never be given: a 400, not a silent cut
    (a reply that fits the context but not the room the prompt leaves stops at it: "length")."""
    for param in ("max_completion_tokens", "max_tokens"):
        asked = getattr(body, param, None)
        if asked is not None and asked > max_model_len:
            raise ApiError(
                400,
                f"{param} is too large: {asked}. This model's context is {max_model_len} tokens, prompt and "
                f"reply together: ask for at most {max_model_len} minus the prompt's tokens.",
                param=param,
            )
