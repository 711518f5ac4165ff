import math

import pytest
import torch

from posttrain.rl import kl_k1, kl_k3, kl_penalty

LP = torch.tensor([0.0, -1.0, -0.5])
REF = torch.tensor([-1.0, 0.0, -0.5])


def close(actual, expected, atol=1e-6):
    torch.testing.assert_close(actual, torch.tensor(expected, dtype=actual.dtype), atol=atol, rtol=0)


def test_k1():
    close(kl_k1(LP, REF), [1.0, -1.0, 0.0])


def test_k3():
    # d = ref - lp = [-1, 1, 0]: e^-1 + 1 - 1 = 0.367879, e^1 - 1 - 1 = 0.718282, e^0 - 0 - 1 = 0
    close(kl_k3(LP, REF), [0.367879, 0.718282, 0.0])


def test_k3_is_non_negative():
    g = torch.Generator().manual_seed(0)
    lp = -5 * torch.rand(1000, generator=g)
    ref = -5 * torch.rand(1000, generator=g)
    assert (kl_k3(lp, ref) >= 0).all()
    assert (kl_k1(lp, ref) < 0).any()  # unlike k1


def test_estimators_are_unbiased_on_a_two_outcome_policy():
    # p = [.5, .5], q = [.25, .75]: KL(p||q) = .5 ln 2 + .5 ln(2/3) = .5 (0.693147 - 0.405465) = 0.143841
    # E_p[k3] = sum_x p (q/p - ln(q/p) - 1) = (sum q - 1) + KL = KL
    p = torch.tensor([0.5, 0.5])
    lp, ref = p.log(), torch.tensor([0.25, 0.75]).log()
    close((p * kl_k1(lp, ref)).sum(), 0.143841)
    close((p * kl_k3(lp, ref)).sum(), 0.143841)


def test_kl_penalty_dispatch():
    close(kl_penalty(LP, REF, "k1"), [1.0, -1.0, 0.0])
    close(kl_penalty(LP, REF, "k3"), [math.exp(-1), math.e - 2, 0.0])
    with pytest.raises(ValueError, match="k2"):
        kl_penalty(LP, REF, "k2")
