"""`posttrain serve`: a model behind an OpenAI-compatible HTTP API, in a standard and a fast
(speculative) variant.

protocol.py (request bodies) · chat_prompt.py (messages to tokens, tool calls back) ·
api_errors.py (OpenAI's error JSON) · engine_worker.py (admission, deadlines and aborts over the
engine loop, engine/stepping_loop.py) · metrics.py (Prometheus text) · app.py (the FastAPI routes,
over app_state.py's AppState) · chat_completions.py, text_completions.py (the two endpoints) ·
engine_requests.py (a request to the worker and back) · openai_responses.py (the response
pieces both endpoints share) · server.py (model loading, uvicorn) · bench.py (`posttrain serve bench`).
"""
