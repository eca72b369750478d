"""Run whileai's IcePop loss through prime-rl's own loss code (559b447), on CPU.

Builds the rl loss the way prime-rl's trainer does (``setup_rl_loss_fn`` on a
``CustomLossConfig`` whose ``import_path`` is ``whileai_core.methods.icepop.icepop_loss``), feeds
it packed sequences through ``compute_loss``, and checks:

1. with a band that masks nothing and ``kl_tau = 1e-3``, IcePop equals prime-rl's default loss
   with its DPPO masks opened (``dppo_mask_low = dppo_mask_high = 1``): same loss, same gradient;
2. with the published band (0.5, 5.0), a token whose ratio leaves the band gets no gradient.

Needs torch, beartype, jaxtyping, wandb, loguru and prime-rl-configs' dependencies importable
(a scratch Python 3.11 venv works; never this project's .venv)::

    /tmp/prl311/bin/python bench/check_icepop_in_prime_rl.py /tmp/prime-rl
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    checkout = Path(argv[0])
    sys.path[:0] = [str(checkout / "src"), str(checkout / "packages" / "prime-rl-configs" / "src"),
                    str(ROOT)]
    import torch
    from prime_rl.configs.trainer import CustomLossConfig, DefaultLossConfig
    from prime_rl.trainer.rl.loss import compute_loss, setup_rl_loss_fn

    from whileai_core.prime_rl.mapping import ICEPOP_IMPORT_PATH

    def run(loss_config, pi, mu, adv, mask):
        pis = [p.clone().requires_grad_(True) for p in pi]
        fn = setup_rl_loss_fn(loss_config)
        loss, metrics = compute_loss(
            trainer_logprobs=pis, inference_logprobs=mu, ref_logprobs=None, advantages=adv,
            loss_mask=mask, rl_weights=None, ce_weights=None, ref_kl_weights=None,
            rl_loss_fn=fn, rl_scale=int(sum(m.sum() for m in mask)), ce_scale=1, ref_kl_scale=1)
        loss.backward()
        return float(loss.detach()), [p.grad.clone() for p in pis], metrics

    t = lambda xs: torch.tensor(xs, dtype=torch.float32)  # noqa: E731
    pi = [torch.log(t([0.5, 0.9, 0.3, 0.2])), torch.log(t([0.6, 0.05]))]
    mu = [torch.log(t([0.5, 0.1, 0.3, 0.8])), torch.log(t([0.5, 0.5]))]
    adv = [t([1.0, 1.0, -2.0, 1.0]), t([-0.5, -0.5])]
    mask = [torch.tensor([True, True, False, True]), torch.tensor([True, True])]

    wide = CustomLossConfig(import_path=ICEPOP_IMPORT_PATH,
                            kwargs={"low": 1e-9, "high": 1e9, "kl_tau": 1e-3})
    opened = DefaultLossConfig(dppo_mask_low=1.0, dppo_mask_high=1.0, kl_tau=1e-3)
    l_ice, g_ice, m_ice = run(wide, pi, mu, adv, mask)
    l_def, g_def, _ = run(opened, pi, mu, adv, mask)
    same_loss = math.isclose(l_ice, l_def, rel_tol=1e-6, abs_tol=1e-7)
    same_grad = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(g_ice, g_def))
    print(f"1. wide band vs prime-rl default (masks opened): loss {l_ice:.6f} vs {l_def:.6f}, "
          f"gradients {'equal' if same_grad else 'DIFFER'}")

    band = CustomLossConfig(import_path=ICEPOP_IMPORT_PATH, kwargs={"low": 0.5, "high": 5.0})
    l_band, g_band, m_band = run(band, pi, mu, adv, mask)
    # ratios: seq 0: 1, 9 (out), 1 (not in mask), 0.25 (out); seq 1: 1.2, 0.1 (out)
    dropped = [g_band[0][1].item(), g_band[0][3].item(), g_band[1][1].item()]
    kept = [g_band[0][0].item(), g_band[1][0].item()]
    n = 5  # tokens in the loss mask (prime-rl divides the summed loss by its token count)
    want_kept = [-1.0 * 1.0 / n, -(-0.5) * 1.2 / n]
    ok_band = all(abs(x) < 1e-9 for x in dropped) and all(
        math.isclose(a, b, rel_tol=1e-5) for a, b in zip(kept, want_kept))
    print(f"2. band (0.5, 5.0): gradients on out-of-band tokens {dropped}, kept {kept} "
          f"(expected {want_kept}); metrics {sorted(k for k in m_band if k.startswith('icepop'))}")
    ok = same_loss and same_grad and ok_band
    print("IcePop runs inside prime-rl's compute_loss: " + ("OK" if ok else "MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
