"""A user's script: compose, a calibrated mechanism and an audit, under mypy --strict."""

import numpy as np

import verify
from accountant import GDP, PLD, compose, subsample
from mechanisms import Domain, Gaussian, Mean

step: PLD = subsample(GDP(1.0), rate=0.01)
run = compose([step] * 100)
lower, upper = run.epsilon_bracket(1e-5)
total: GDP = compose([GDP(0.3), GDP(0.4)])
mech = Gaussian.calibrated(Mean(Domain(0.0, 1.0, n=100)), GDP(0.5))
sigma: float = float(mech.sigma)
data = np.linspace(0.0, 1.0, 100)
release = mech.sample(data, np.random.default_rng(0))
neighbour = data.copy()
neighbour[0] = 1.0
report = verify.audit(mech, [(data, neighbour)], GDP(0.5), samples=2000, seed=0)
print(upper - lower, total.mu, sigma, release, report.violation, report.epsilon_lower)
