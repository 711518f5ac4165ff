"""Device-placement mistakes, caught without a GPU.

On a CPU machine a tensor made without `device=` or moved with `.to("cpu")` lands where the
trainer is, so a CPU run cannot show the mistake; on CUDA it is an error (or a silent copy per
micro-batch). `PlacementAudit` watches a trainer step through a TorchFunctionMode instead: every
tensor posttrain's own code makes must name its device, no tensor may move between devices
during a step (the model and the batch start where they belong), and every tensor any op
returns must be on the trainer's device. After the step the parameters, gradients and optimizer
state are checked where they are kept.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch.overrides import TorchFunctionMode

import posttrain
from posttrain.config import AlgorithmConfig, OptimConfig
from posttrain.errors import PosttrainError
from posttrain.train.device import resolve_device
from posttrain.train.samples import TrainSample
from posttrain.train.trainer import PolicyTrainer

POSTTRAIN = str(Path(posttrain.__file__).parent)
FACTORIES = {
    torch.tensor,
    torch.as_tensor,
    torch.zeros,
    torch.ones,
    torch.full,
    torch.empty,
    torch.arange,
    torch.rand,
    torch.randn,
    torch.eye,
    torch.linspace,
}
MOVES = {torch.Tensor.to, torch.Tensor.cpu, torch.Tensor.cuda}


def _names_a_device(func, args, kwargs) -> bool:
    """Whether a `.to(...)`/`.cpu()`/`.cuda()` call moves its tensor (not only casts its dtype)."""
    if func is not torch.Tensor.to:
        return True
    if "device" in kwargs:
        return True
    return any(isinstance(a, (str, torch.device)) or isinstance(a, torch.Tensor) for a in args[1:])


class PlacementAudit(TorchFunctionMode):
    """Records, during a trainer step, each placement mistake as a line saying where it was made."""

    def __init__(self, device: torch.device, watched: tuple[str, ...] = (POSTTRAIN,)) -> None:
        super().__init__()
        self.device = torch.device(device)
        self.watched = watched
        self.mistakes: list[str] = []
        self.results_seen = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        caller = sys._getframe(1)
        where = f"{caller.f_code.co_filename}:{caller.f_lineno}"
        ours = caller.f_code.co_filename.startswith(self.watched)
        if ours and func in FACTORIES and kwargs.get("device") is None:
            self.mistakes.append(f"{where}: {func.__name__} without device=")
        if ours and func in MOVES and _names_a_device(func, args, kwargs):
            self.mistakes.append(f"{where}: a tensor moved between devices during a step ({func.__name__})")
        result = func(*args, **kwargs)
        for tensor in _tensors(result):
            self.results_seen += 1
            if tensor.device.type != self.device.type:
                self.mistakes.append(f"{where}: {func.__name__} gave a tensor on {tensor.device}")
        return result


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item)


def kept_tensors(trainer: PolicyTrainer):
    """(what, tensor) for everything the trainer keeps between steps on its device."""
    for name, param in trainer.model.named_parameters():
        yield f"param {name}", param
        if param.grad is not None:
            yield f"grad {name}", param.grad
    for param, state in trainer.optimizer.state.items():
        for key, value in state.items():
            # torch keeps AdamW's step count on the CPU by design (unless capturable or fused)
            if isinstance(value, torch.Tensor) and key != "step":
                yield f"optimizer {key} of a {tuple(param.shape)} parameter", value


def samples(tokenizer) -> list[TrainSample]:
    """Two groups sharing a prompt of over 16 tokens (the shared-prefix path runs) and a
    multi-turn sample with a completion mask."""
    shared = list(range(100, 130))
    out = [
        TrainSample(shared, [7 + k, 8, 9 + k], [-1.0, -2.0, -0.5], advantage=a) for k, a in enumerate([-1.0, 1.0, 0.5])
    ]
    out.append(TrainSample([5, 6, 7], [11, 12, 13, 14], [-1.0] * 4, advantage=0.7, completion_mask=[1, 0, 0, 1]))
    return out


@pytest.mark.parametrize(
    "algorithm",
    [
        AlgorithmConfig(),
        AlgorithmConfig(loss="gspo", kl_coef=0.1, updates_per_batch=2, tis_cap=None),
        AlgorithmConfig(loss="nll", tis_cap=None),
    ],
    ids=["ppo_clip", "gspo-kl-two-updates", "nll"],
)
def test_a_step_keeps_every_tensor_on_the_trainers_device(tiny_model, tokenizer, algorithm):
    import copy

    device = torch.device("cpu")
    reference = copy.deepcopy(tiny_model).eval() if algorithm.kl_coef else None
    trainer = PolicyTrainer(
        tiny_model, OptimConfig(lr=1e-3), algorithm, 0.9, tokenizer.pad_token_id, reference, device=device
    )
    audit = PlacementAudit(device)
    with audit:
        stats = trainer.step(samples(tokenizer))
    assert audit.mistakes == []
    assert audit.results_seen > 100 and stats["grad_norm"] > 0  # the audit saw the step run
    kept = list(kept_tensors(trainer))
    assert any(what.startswith("optimizer exp_avg") for what, _ in kept)
    misplaced = [what for what, tensor in kept if tensor.device.type != device.type]
    assert misplaced == []


def test_the_audit_catches_a_misplaced_tensor(tiny_model, tokenizer, monkeypatch):
    """The audit is not blind: a batch tensor made without device=, or moved to the CPU, in the
    trainer's own code is reported with its line."""
    trainer = PolicyTrainer(tiny_model, OptimConfig(), AlgorithmConfig(), 1.0, tokenizer.pad_token_id)
    original = PolicyTrainer._batch_tensors

    def without_device(self, samples, indices):
        ids, mask, loss_mask, engine = original(self, samples, indices)
        return ids, mask, torch.zeros(loss_mask.shape) + loss_mask, engine.to("cpu")

    monkeypatch.setattr(PolicyTrainer, "_batch_tensors", without_device)
    audit = PlacementAudit(trainer.device, watched=(POSTTRAIN, __file__))
    with audit:
        trainer.step(samples(tokenizer))
    assert any("zeros without device=" in m and "test_device_placement.py" in m for m in audit.mistakes)
    assert any("moved between devices" in m for m in audit.mistakes)


def test_a_model_on_another_device_is_reported(tiny_model, tokenizer):
    """Results on a device other than the trainer's (here a model left on "meta") are caught."""
    trainer = PolicyTrainer(tiny_model, OptimConfig(), AlgorithmConfig(), 1.0, tokenizer.pad_token_id)
    audit = PlacementAudit(torch.device("meta"))
    with audit:
        torch.zeros(2, device="cpu") + 1
    assert any("on cpu" in m for m in audit.mistakes)
    assert trainer.device == torch.device("cpu")


def test_the_trainer_puts_the_model_and_its_optimizer_state_on_its_device(tiny_model, tokenizer):
    """Placed on "meta" (no memory, no GPU needed): the parameters and the optimizer are made there."""
    reference = tiny_model.__class__(tiny_model.config)
    trainer = PolicyTrainer(
        tiny_model,
        OptimConfig(),
        AlgorithmConfig(kl_coef=0.1),
        1.0,
        tokenizer.pad_token_id,
        reference_model=reference,
        device="meta",
    )
    assert {p.device.type for p in trainer.model.parameters()} == {"meta"}
    assert {p.device.type for p in trainer.reference_model.parameters()} == {"meta"}
    assert all(p.device.type == "meta" for group in trainer.optimizer.param_groups for p in group["params"])


def test_auto_is_the_cpu_here_and_with_the_builtin_engine():
    assert resolve_device("cpu", "hf") == torch.device("cpu")
    assert resolve_device("auto", "builtin") == torch.device("cpu")
    if not torch.cuda.is_available():
        assert resolve_device("auto", "hf") == torch.device("cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message a machine without a GPU gives")
def test_cuda_without_a_gpu_is_one_line_naming_the_key():
    with pytest.raises(PosttrainError) as error:
        resolve_device("cuda", "hf")
    message = str(error.value)
    assert "\n" not in message and message.startswith('train.device = "cuda"') and 'device = "cpu"' in message


@pytest.mark.parametrize(("named", "expected"), [("cpu", "gloo"), ("cuda", "nccl")])
def test_ranks_join_with_the_backend_for_the_device_their_launcher_named(monkeypatch, named, expected):
    from posttrain.train.device import DEVICE_ENV
    from posttrain.train.process_group import backend

    monkeypatch.setenv(DEVICE_ENV, named)
    assert backend() == expected
    monkeypatch.delenv(DEVICE_ENV)
    assert backend() == ("nccl" if torch.cuda.is_available() else "gloo")
