"""Is there a Modal token on this machine? Answered without touching the network.

Modal reads ``MODAL_TOKEN_ID``/``MODAL_TOKEN_SECRET`` from the environment, else the active
profile of ``~/.modal.toml`` (or ``MODAL_CONFIG_PATH``). Every recipe checks before it starts a
GPU, so a missing token is one clear line.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from whileai_core.errors import ConfigError

MISSING_TOKEN = (
    "no Modal token: set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, or run `modal token set "
    "--token-id ... --token-secret ...` (writes ~/.modal.toml). The offline path needs neither: "
    "run.py --smoke --out DIR")


def _config_has_token(path: Path) -> bool:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    profiles = [v for v in data.values() if isinstance(v, dict)]
    wanted = os.environ.get("MODAL_PROFILE")
    if wanted:
        profiles = [data.get(wanted)] if isinstance(data.get(wanted), dict) else []
    elif any(p.get("active") for p in profiles):
        profiles = [p for p in profiles if p.get("active")]
    return any(p.get("token_id") and p.get("token_secret") for p in profiles)


def has_modal_token() -> bool:
    if os.environ.get("MODAL_TOKEN_ID") and os.environ.get("MODAL_TOKEN_SECRET"):
        return True
    path = Path(os.environ.get("MODAL_CONFIG_PATH") or Path.home() / ".modal.toml")
    return path.is_file() and _config_has_token(path)


def require_modal_token() -> None:
    """Raise ``ConfigError`` naming MODAL_TOKEN_ID/MODAL_TOKEN_SECRET when there is no token."""
    if not has_modal_token():
        raise ConfigError(MISSING_TOKEN)
