"""Seeds from params, derived per unit of work so results do not depend on execution order."""
from __future__ import annotations

import hashlib


def derive_seed(base: int, *keys) -> int:
    """A stable 32-bit seed for (base, keys): the same for any run order, process or machine."""
    text = ":".join(str(k) for k in (base, *keys))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
