"""Errors in OpenAI's JSON shape: {"error": {"message", "type", "param", "code"}}."""

from __future__ import annotations

from fastapi.responses import JSONResponse


class ApiError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        type_: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.code = status, message, type_, param, code
        self.headers = headers

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status, headers=self.headers)


def validation_error(errors: list[dict]) -> ApiError:
    """pydantic's first complaint as one readable line, naming the field."""
    first = errors[0] if errors else {}
    if first.get("type") == "json_invalid":  # its location is a character offset, not a field
        reason = (first.get("ctx") or {}).get("error", "JSON decode error")
        return ApiError(400, f"the request body is not valid JSON ({reason}, at character {first['loc'][-1]})")
    if first.get("type") == "missing" and tuple(first.get("loc", ())) == ("body",):
        return ApiError(400, "the request body is empty: expected a JSON object")
    location = [str(part) for part in first.get("loc", ()) if part != "body"]
    message = str(first.get("msg", "invalid request")).removeprefix("Value error, ")
    param = ".".join(location) or None
    return ApiError(400, f"{param}: {message}" if param else message, param=param)
