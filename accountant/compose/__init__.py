"""The tools that compose guarantees: ``compose`` (closed forms, exact PLD composition, CLT, RDP and
the classic baselines), ``calibrate``, the budget ``Ledger``, serialisation, and DP-SGD (its PLD,
RDP and calibration)."""
