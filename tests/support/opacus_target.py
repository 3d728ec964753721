"""An Opacus training run as a canary-audit target (tests and benchmarks; needs the ``opacus`` extra).

The model is a logistic regression ``torch.nn.Linear(f + m, 1)`` trained by Opacus' ``PrivacyEngine``
(Poisson sampling at rate q = 1 / ``batches``, per-example clipping to ``max_grad_norm``, Gaussian
noise of standard deviation ``noise_multiplier * max_grad_norm`` on the batch's sum, plain SGD).
The background data are ``n`` records with ``f`` real features (two Gaussian classes) and zeros on
the ``m`` canary coordinates; canary i is the record (``radius`` e_{f+i}, label 1): a Dirac canary
whose gradient lies along its own coordinate only, with norm (1 - sigmoid(z)) ``radius``, above
the clipping norm while the logit z stays below log(radius / C - 1). The score of canary i is the
trained weight w_{f+i}, which the canary's clipped gradient pushes up by lr C / (q N) each step it
is sampled (the white-box gradient-canary design of Nasr et al. 2023).

Variants (what Opacus is asked to run; the claim is always ``dpsgd_pld(q, noise_multiplier, T)``):

- ``correct``: ``noise_multiplier`` and ``max_grad_norm`` as claimed;
- ``low_noise``: a noise multiplier ``noise_multiplier / 10`` passed to Opacus;
- ``no_clipping``: ``max_grad_norm = 1e6`` (clipping never binds) with the noise multiplier scaled
  so that the noise's standard deviation is still ``noise_multiplier * max_grad_norm`` (the noise
  calibrated to the claimed clipping norm that is not applied).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np

from accountant import PLD, dpsgd_pld

__all__ = ["OPACUS_VARIANTS", "OpacusLogistic", "OpacusVariant"]

OpacusVariant = Literal["correct", "low_noise", "no_clipping"]
OPACUS_VARIANTS: tuple[OpacusVariant, ...] = ("correct", "low_noise", "no_clipping")

_UNCLIPPED = 1e6


@dataclass(frozen=True)
class OpacusLogistic:
    """Opacus DP-SGD on a logistic regression with Dirac canaries (module docstring)."""

    m: int = 256
    features: int = 2
    n: int = 256
    batches: int = 8  # q = 1 / batches
    epochs: int = 5
    noise_multiplier: float = 1.0
    max_grad_norm: float = 1.0
    radius: float = 20.0
    lr: float = 0.01
    variant: OpacusVariant = "correct"

    @property
    def sampling_rate(self) -> float:
        return 1.0 / self.batches

    @property
    def steps(self) -> int:
        return self.batches * self.epochs

    def claim(self) -> PLD:
        """The accountant's guarantee for one run as claimed (Poisson DP-SGD, sensitivity 1)."""
        return dpsgd_pld(self.sampling_rate, self.noise_multiplier, self.steps)

    def background(self, rng: np.random.Generator) -> np.ndarray:
        """n rows (x: f features, then m zeros; y in {0, 1}): two unit-variance Gaussian classes
        centred at -1 and +1 on every feature."""
        y = rng.integers(0, 2, self.n)
        x = rng.normal(size=(self.n, self.features)) + (2.0 * y[:, None] - 1.0)
        rows = np.zeros((self.n, self.features + self.m + 1))
        rows[:, : self.features] = x
        rows[:, -1] = y
        return rows

    def canaries(self) -> np.ndarray:
        """m rows: canary i is x = radius e_{f+i}, y = 1."""
        rows = np.zeros((self.m, self.features + self.m + 1))
        rows[np.arange(self.m), self.features + np.arange(self.m)] = self.radius
        rows[:, -1] = 1.0
        return rows

    def _opacus_parameters(self) -> tuple[float, float]:
        if self.variant == "low_noise":
            return self.noise_multiplier / 10.0, self.max_grad_norm
        if self.variant == "no_clipping":
            return self.noise_multiplier * self.max_grad_norm / _UNCLIPPED, _UNCLIPPED
        return self.noise_multiplier, self.max_grad_norm

    def train(self, data: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One Opacus run on ``data`` (rows as in ``background``), seeded from ``rng``; returns the
        trained weight vector (f + m coordinates)."""
        import torch
        from opacus import PrivacyEngine

        seed = int(rng.integers(2**62))
        torch.manual_seed(seed)
        n = len(data)
        batch_size = math.ceil(n / self.batches)
        if math.ceil(n / batch_size) != self.batches:  # Opacus' rate is 1 / len(data_loader)
            raise ValueError(f"{n} records do not give {self.batches} batches")
        x = torch.tensor(data[:, :-1], dtype=torch.float32)
        y = torch.tensor(data[:, -1:], dtype=torch.float32)
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch_size,
                                             generator=torch.Generator().manual_seed(seed + 1))
        model = torch.nn.Linear(x.shape[1], 1)
        torch.nn.init.zeros_(model.weight)
        torch.nn.init.zeros_(model.bias)
        optimizer = torch.optim.SGD(model.parameters(), lr=self.lr)
        sigma, clip = self._opacus_parameters()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # secure_mode and the functorch notices
            model, optimizer, loader = PrivacyEngine().make_private(
                module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=sigma,
                max_grad_norm=clip, poisson_sampling=True,
                noise_generator=torch.Generator().manual_seed(seed + 2))
            assert abs(loader.sample_rate - self.sampling_rate) < 1e-12
            criterion = torch.nn.BCEWithLogitsLoss()
            for _ in range(self.epochs):
                for xb, yb in loader:
                    optimizer.zero_grad()
                    criterion(model(xb), yb).backward()  # P(empty batch) = (1 - q)^n < 1e-14
                    optimizer.step()
        w: np.ndarray = model._module.weight.detach().numpy()[0].astype(np.float64)
        return w

    def score(self, weights: np.ndarray, canary: np.ndarray) -> float:
        """The trained weight on the canary's coordinate (higher: more likely included)."""
        return float(weights[self.features + int(np.argmax(canary[self.features:-1]))])
