import importlib.util
import os

os.environ.setdefault("OMP_NUM_THREADS", "2")
if os.environ.get("PYTEST_XDIST_WORKER"):  # `make test` runs a worker per core: one thread each
    os.environ["OMP_NUM_THREADS"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# A local ray.init() turns Ray's token auth on for the rest of its process (it sets RAY_AUTH_MODE
# in os.environ); the test clusters run without it, so a later test in the same worker process
# would have its calls refused by its own cluster and its actors die as they start.
os.environ["RAY_AUTH_MODE"] = "disabled"

from pathlib import Path

import pytest
import torch
from transformers.utils import logging as hf_logging

from tests.forked_cli import install as fork_cli_commands

fork_cli_commands()  # `python -m posttrain.cli` processes start from a preloaded interpreter

hf_logging.set_verbosity_error()
hf_logging.disable_progress_bar()


# The longest files, longest first, from `make test --durations` on a 2-core AVX2 EPYC (where the
# whole suite is slowest). `make test` gives each of its 2 workers a whole file at a time in
# collection order (--no-loadscope-reorder: xdist's default order, most tests first, put these
# files of one to three long tests last); a long file collected last leaves the other worker
# idle for its length, so these go first and the short files fill in at the end. Files not
# listed keep their order.
LONGEST_FIRST = (
    "storage/test_preemption.py",
    "storage/test_out_url.py",
    "quality/test_builtin_suite_clean.py",
    "quality/test_corpus.py",
    "pipeline/test_sft.py",
    "tasks/test_terminal_gen_quality.py",
    "evaluate/test_eval_run.py",
    "pipeline/test_resume_after_kill.py",
    "pipeline/test_async_resume_after_kill.py",
    "engine/service/test_elastic_replicas.py",
    "engine/service/test_engine_replicas.py",
    "engine/test_builtin_engine.py",
    "dispatch/test_ray_cluster.py",
    "train/test_shared_prefix.py",
)


def pytest_collection_modifyitems(session, config, items):
    tests = Path(__file__).parent
    rank = {name: index for index, name in enumerate(LONGEST_FIRST)}

    def key(item) -> int:
        try:
            relative = Path(str(item.path)).relative_to(tests).as_posix()
        except ValueError:
            return len(rank)
        return rank.get(relative, len(rank))

    items.sort(key=key)  # stable: the order within a file, and of the other files, is kept
    if importlib.util.find_spec("vllm") is None:
        skip = pytest.mark.skip(reason="needs vLLM: make test runs it in .venv-vllm (scripts/test_vllm.sh)")
        for item in items:
            if item.get_closest_marker("vllm"):
                item.add_marker(skip)


def sigint_as_in_a_terminal() -> None:
    """preexec_fn for a command a test interrupts with SIGINT: Ctrl-C's default disposition, not
    whatever the test process inherited or set (a process started with SIGINT ignored, as under
    nohup, never turns it into KeyboardInterrupt)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def expects_bit_equality(model) -> bool:
    """Whether this CPU's kernels give the engine the trainer's bits on this model: the engine's
    own start-up probe (row_invariance.py). Where it does not, the engine warns, and tests of
    zero mismatch check float noise instead."""
    from posttrain.engine.builtin.row_invariance import probe_model

    return probe_model(model).holds


def assert_logprobs_match(engine_side, trainer_side, bit_equal: bool, message=None) -> None:
    """Equal to the bit where the probe promises it, else within float noise."""
    engine_side, trainer_side = torch.as_tensor(engine_side), torch.as_tensor(trainer_side)
    if bit_equal:
        assert torch.equal(engine_side, trainer_side), message
    else:
        assert torch.allclose(engine_side, trainer_side, atol=1e-4, rtol=0), message


@pytest.fixture(scope="session")
def tokenizer():
    from posttrain.models.loading import load_tokenizer

    return load_tokenizer("tiny-llama")


@pytest.fixture
def tiny_model():
    from posttrain.models.loading import load_model

    return load_model("tiny-llama", seed=0)


TINY_CONFIG = """
seed = 3
threads = 1

[model]
name = "tiny-llama"

[[domains]]
name = "add"
source = "reasoning-gym:basic_arithmetic"
heldout = 4
params = {{ min_terms = 2, max_terms = 2, min_digits = 1, max_digits = 1, operators = ["+"] }}
answer_extraction = "last_number"

[[domains]]
name = "count"
source = "reasoning-gym:letter_counting"
weight = 2.0
heldout = 4

[rollout]
prompts_per_step = 3
group_size = 2
max_new_tokens = 4

[algorithm]
dynamic_sampling = false

[optim]
lr = 1e-3
micro_batch_tokens = 256

[train]
steps = {steps}
checkpoint_every = {checkpoint_every}
keep_checkpoints = 2
"""


def write_tiny_config(directory: Path, steps: int = 6, checkpoint_every: int = 2) -> Path:
    path = directory / "tiny.toml"
    path.write_text(TINY_CONFIG.format(steps=steps, checkpoint_every=checkpoint_every))
    return path


@pytest.fixture
def tiny_config(tmp_path):
    """write(steps=..., checkpoint_every=...) -> path of a tiny-llama training config."""
    return lambda **kw: write_tiny_config(tmp_path, **kw)
