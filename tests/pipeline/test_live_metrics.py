"""A live run's own Prometheus endpoint: scraped over HTTP while a real (tiny) async run trains,
parsed with prometheus_client's own parser; a port in use is one error line before the run starts."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from tests.cli.test_failed_start import run_cli
from tests.conftest import sigint_as_in_a_terminal

ROOT = Path(__file__).resolve().parents[2]


def scrape(url: str) -> dict[str, list]:
    with urllib.request.urlopen(url, timeout=60) as response:  # the run's threads share 2 busy cores
        text = response.read().decode()
    return {family.name: family.samples for family in text_string_to_metric_families(text)}


def test_a_live_run_serves_its_engine_scheduler_and_latest_step(tmp_path, tiny_config):
    config = tiny_config(steps=400, checkpoint_every=400)
    config.write_text(
        config.read_text().replace("[model]", 'mode = "async"\n[model]', 1) + "[logging]\nmetrics_port = 0\n"
    )
    out = tmp_path / "run"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "posttrain.cli", "train", str(config), "--out", str(out)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # the SIGINT that ends it must not be ignored because the suite runs in the background
        preexec_fn=sigint_as_in_a_terminal,
    )
    try:
        deadline = time.monotonic() + 300
        families: dict = {}
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stdout.read()[-3000:]
            endpoint = out / "metrics_endpoint.json"
            if endpoint.is_file():
                families = scrape(json.loads(endpoint.read_text())["url"])
                if families.get("posttrain_step") and families["posttrain_step"][0].value >= 2:
                    break
            time.sleep(0.5)
        assert families.get("posttrain_step"), "no step reached the endpoint"
        run_label = {"run": "run"}
        for name in (
            "posttrain_live",
            "posttrain_engine_calls_waiting",
            "posttrain_engine_sequences_running",
            "posttrain_policy_version",
            "posttrain_rollout_in_flight",
            "posttrain_dispatch_workers",
            "posttrain_dispatch_retries",
            "posttrain_step_s",
            "posttrain_reward_mean",
        ):
            assert name in families and families[name][0].labels == run_label, name
        assert families["posttrain_dispatch_workers"][0].value >= 1
        assert families["posttrain_policy_version"][0].value >= 1
        per_domain = {s.labels["domain"] for s in families.get("posttrain_mixture_weight", [])}
        assert per_domain == {"add", "count"}
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
    assert proc.returncode in (0, 130)


def test_a_metrics_port_in_use_is_one_error_line_before_the_run_starts(tmp_path, tiny_config):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        config = tiny_config(steps=2, checkpoint_every=2)
        config.write_text(config.read_text() + f"[logging]\nmetrics_port = {port}\n")
        out = tmp_path / "run"
        done = run_cli("train", config, "--out", out, timeout=300)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stderr.strip() == (
        f"error: [logging] metrics_port: cannot listen on 127.0.0.1:{port} (Address already in use); "
        "choose another port"
    )
    assert not out.exists()  # refused before anything was written, let alone a model loaded
