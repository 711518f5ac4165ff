"""`posttrain serve bench` end to end on the tiny model: both variants' real servers over HTTP,
the report's shape, identical greedy output, and the vLLM arms reported as not run."""

import json

from tests.cli.test_cli_errors import run_cli


def test_a_chat_cell_runs_both_variants_and_reports_their_ratio(tmp_path):
    """With --compile: both variants' servers compiled, and still the same greedy output."""
    out = tmp_path / "bench.json"
    result = run_cli(
        "serve", "bench", "--model", "tiny-llama", "--workloads", "chat", "--concurrency-levels", "2",
        "--requests-per-client", "5", "--vllm", "off", "--compile", "--output", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    chat = report["workloads"]["chat"]
    for variant in ("standard", "fast"):
        cell = chat[variant]["2"]
        assert cell["requests"] == 10  # five per client, ten distinct questions
        assert cell["output_tokens"] > 0 and cell["output_tok_s"] > 0
        assert cell["ttft_p50_s"] <= cell["ttft_p95_s"]
    assert chat["fast"]["2"]["acceptance_rate"] is not None and chat["standard"]["2"]["acceptance_rate"] is None
    ratio = chat["fast_over_standard_tok_s"]["2"]
    assert ratio == round(chat["fast"]["2"]["output_tok_s"] / chat["standard"]["2"]["output_tok_s"], 3)
    assert chat["greedy_identical"] is True and report["goals"]["greedy_identical"] is True
    assert report["vllm"] == "not run: --vllm off" and report["settings"]["compiled_step"] is True
    assert "cpu" in report


def test_the_ratios_to_vllm_pair_each_repeat_with_its_own_vllm_cells():
    from posttrain.serve.bench import Settings, _vllm_report

    settings = Settings(workloads=("agent",), concurrencies=(1,), repeats=2)
    tok_s = {"standard": [30.0, 20.0], "fast": [60.0, 40.0], "vllm": [30.0, 40.0], "vllm-ngram": [50.0, 50.0]}
    runs = {("agent", arm, 1): [{"output_tok_s": v} for v in values] for arm, values in tok_s.items()}
    texts = {("agent", arm, 1): ["same"] for arm in tok_s}
    report = _vllm_report(settings, runs, texts, {"version": "0.32.0"})
    ratios = report["ratios"]["agent"]
    # repeat by repeat: 30/30 and 20/40; the medians of the totals would say 25/35
    assert ratios["standard_over_vllm_by_repeat"]["1"] == [1.0, 0.5]
    assert ratios["standard_over_vllm"]["1"] == 0.75
    assert ratios["fast_over_vllm_ngram_by_repeat"]["1"] == [1.2, 0.8]
    assert report["cells"]["vllm"]["agent"]["1"]["runs"] == runs[("agent", "vllm", 1)]
    assert report["greedy_identical_to_standard"] == {"agent": {"1": True}}


def test_each_variant_runs_next_to_its_vllm_counterpart_in_alternating_order():
    from posttrain.serve.bench import cell_order

    assert cell_order(0, True) == ["standard", "vllm", "fast", "vllm-ngram"]
    assert cell_order(1, True) == ["vllm-ngram", "fast", "vllm", "standard"]
    for repeat in range(4):
        order = cell_order(repeat, True)
        for ours, theirs in (("standard", "vllm"), ("fast", "vllm-ngram")):
            assert abs(order.index(ours) - order.index(theirs)) == 1
    assert cell_order(0, False) == ["standard", "fast"] and cell_order(1, False) == ["fast", "standard"]
