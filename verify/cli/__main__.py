"""``python -m verify.cli``: the ``dpcert`` command."""

from __future__ import annotations

from . import main

raise SystemExit(main())
