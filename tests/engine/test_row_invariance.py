"""The engine's start-up probe of row invariance: what it finds is what the engine relies on."""

import torch
import torch.nn.functional as F

from posttrain.engine.builtin import engine as engine_module
from posttrain.engine.builtin import row_invariance
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.builtin.row_invariance import ROW_COUNTS, RowInvariance, agreeing_row_counts, probe


def test_a_count_the_kernel_rounds_differently_is_found_and_padded_past():
    # small integers: every sum is exact in fp32, so any BLAS gives the same bits, and the only
    # difference is the one planted for fewer than 8 rows
    weight = torch.randint(-3, 4, (64, 32)).float()

    def engine_side(x):
        out = F.linear(x.round(), weight)
        return out if x.shape[0] >= 8 else out + 0.5

    counts = agreeing_row_counts(engine_side, lambda x: F.linear(x.round(), weight), 32, torch.float32)
    assert counts == tuple(c for c in ROW_COUNTS if c >= 8)
    found = RowInvariance("test", counts, min(counts), True, 0.0)
    assert found.holds and [found.padded_rows(m) for m in (1, 7, 8, 9)] == [8, 8, 8, 9]


def test_no_agreeing_count_means_it_does_not_hold_and_says_which_rows_differ():
    found = RowInvariance("mkl", (16, 20), None, True, 0.0)
    assert not found.holds
    assert found.padded_rows(5) == 5  # nothing to pad to: run as it is, and warn
    assert "mkl linear layers round a row differently at [1, 2" in found.describe()


def test_what_the_probe_reports_holds_for_every_padded_count_with_either_kernel(monkeypatch):
    shapes = ((64, 128), (128, 64))
    for available in (row_invariance.onednn_linear.AVAILABLE, False):  # oneDNN here, and MKL's sgemm
        monkeypatch.setattr(row_invariance.onednn_linear, "AVAILABLE", available)
        found = probe.__wrapped__(shapes, 4, 2, 16)
        assert found.seconds > 0 and found.skipped is None
        assert found.attention_agrees == row_invariance.attention_agrees(4, 2, 16, torch.float32)
        weight = torch.randn(128, 64)
        engine_fn, trainer_fn = row_invariance._linear_paths(weight)
        x = torch.randn(row_invariance.REFERENCE_ROWS, 64)
        reference = trainer_fn(x)
        with torch.inference_mode():
            for m in ROW_COUNTS:
                padded = found.padded_rows(m)
                assert padded >= m
                if found.holds:
                    assert torch.equal(engine_fn(x[:padded])[:m], reference[:m]), (available, m)


def test_a_bf16_engine_is_not_probed_and_not_called_bit_equal():
    found = probe.__wrapped__(((64, 64),), 4, 2, 16, torch.bfloat16)
    assert not found.holds and "bfloat16" in found.describe() and found.padded_rows(3) == 3


def test_the_engine_probes_at_start_up_and_warns_once_when_it_cannot_match(tiny_model, tokenizer, capsys):
    engine = BuiltinEngine(tiny_model, tokenizer, num_blocks=64)
    assert engine.invariance.shapes and engine.invariance.skipped is None
    assert engine.invariance.holds == (engine.invariance.min_rows is not None and engine.invariance.attention_agrees)
    failing = RowInvariance("mkl", (16,), None, True, 0.0)
    engine_module._warn_once(failing)
    engine_module._warn_once(failing)
    assert capsys.readouterr().err.count("warning: builtin engine: mkl linear layers round a row differently") == 1
