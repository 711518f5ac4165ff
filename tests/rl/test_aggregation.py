import pytest
import torch

from posttrain.rl import aggregate

VALUES = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
MASK = torch.tensor([[1, 1, 0], [1, 0, 0]])


def close(actual, expected, atol=1e-6):
    torch.testing.assert_close(actual, torch.tensor(expected, dtype=actual.dtype), atol=atol, rtol=0)


def test_token_mean():
    # masked sum 1 + 2 + 4 = 7 over 3 tokens
    close(aggregate(VALUES, MASK, "token_mean"), 7 / 3)
    close(aggregate(VALUES, MASK, "token_mean", normalizer=7.0), 1.0)


def test_seq_mean():
    # seq 0: (1 + 2) / 2 = 1.5, seq 1: 4 / 1 = 4 -> (1.5 + 4) / 2 = 2.75
    close(aggregate(VALUES, MASK, "seq_mean"), 2.75)
    close(aggregate(VALUES, MASK, "seq_mean", normalizer=5.0), 5.5 / 5)


def test_seq_mean_ignores_empty_sequences():
    values = torch.cat([VALUES, torch.tensor([[7.0, 8.0, 9.0]])])
    mask = torch.cat([MASK, torch.tensor([[0, 0, 0]])])
    # the empty row neither adds to the sum nor to the count of sequences: still 2.75
    close(aggregate(values, mask, "seq_mean"), 2.75)


def test_token_sum_norm():
    # Dr. GRPO: 7 / (max_tokens 3 * n_seqs 2)
    close(aggregate(VALUES, MASK, "token_sum_norm", normalizer=6.0), 7 / 6)
    with pytest.raises(ValueError, match="normalizer"):
        aggregate(VALUES, MASK, "token_sum_norm")


def test_all_padding_gives_zero_not_nan():
    empty = torch.zeros_like(MASK)
    close(aggregate(VALUES, empty, "token_mean"), 0.0)
    close(aggregate(VALUES, empty, "seq_mean"), 0.0)


def test_unknown_mode_names_the_allowed_ones():
    with pytest.raises(ValueError, match="token_mean.*seq_mean.*token_sum_norm"):
        aggregate(VALUES, MASK, "seq_sum")


MICRO_MASK = torch.tensor(
    [[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1]], dtype=torch.float64
)  # 3 + 1 + 2 + 4 = 10 tokens; micro-batch halves hold 4 and 6


def _loss_and_grad(mode, rows, normalizer):
    w = torch.linspace(-1.0, 1.5, 16, dtype=torch.float64).reshape(4, 4).requires_grad_()
    values = w**2 + 3 * w  # non-linear so the gradient depends on which tokens count where
    loss = sum(aggregate(values[r], MICRO_MASK[r], mode, normalizer) for r in rows)
    loss.backward()
    return loss.detach(), w.grad


@pytest.mark.parametrize(
    "mode, global_normalizer",
    [("token_mean", 10.0), ("seq_mean", 4.0), ("token_sum_norm", 16.0)],
)
def test_micro_batches_with_global_normalizer_match_full_batch(mode, global_normalizer):
    full_norm = None if mode != "token_sum_norm" else global_normalizer
    full_loss, full_grad = _loss_and_grad(mode, [slice(0, 4)], full_norm)
    micro_loss, micro_grad = _loss_and_grad(mode, [slice(0, 2), slice(2, 4)], global_normalizer)
    torch.testing.assert_close(micro_loss, full_loss)
    torch.testing.assert_close(micro_grad, full_grad)


def test_micro_batches_with_local_normalizer_do_not_match():
    # why the normalizer exists: averaging per-micro-batch token means weights the
    # 4-token half and the 6-token half equally, which is not the 10-token mean
    full_loss, _ = _loss_and_grad("token_mean", [slice(0, 4)], None)
    micro_loss, _ = _loss_and_grad("token_mean", [slice(0, 2), slice(2, 4)], None)
    assert not torch.allclose(micro_loss / 2, full_loss)
