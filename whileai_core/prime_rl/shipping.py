"""What a config needs inside prime-rl's image beyond prime-rl itself.

An IcePop config is a ``custom`` loss whose ``import_path`` points at
``whileai_core.methods.icepop.icepop_loss``: prime-rl's trainer imports that module, so it must
exist in the container's venv. The recipe image (prime-rl's published image, unchanged) does not
ship ``whileai_core``, so such a config is refused before launch rather than failing on the GPU.
"""

from __future__ import annotations

import tomllib

from ..errors import ConfigError

OUR_PACKAGE = "whileai_core"


def custom_loss_import(config_text: str) -> str | None:
    """The ``[trainer.loss] import_path`` of a ``custom`` loss, else None."""
    try:
        config = tomllib.loads(config_text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"the config is not TOML ({exc})",
                          fix="pass a prime-rl rl TOML") from None
    loss = config.get("trainer", {}).get("loss", {})
    if isinstance(loss, dict) and loss.get("type") == "custom":
        path = loss.get("import_path")
        return str(path) if path is not None else None
    return None


def refuse_unshipped_loss(config_text: str, *, source: str = "the config") -> None:
    """Raise :class:`ConfigError` when the config's loss lives in ``whileai_core``, which the
    recipe's image (prime-rl's own) does not contain."""
    path = custom_loss_import(config_text)
    if path is not None and (path == OUR_PACKAGE or path.startswith(OUR_PACKAGE + ".")):
        raise ConfigError(
            f"{source}: [trainer.loss] import_path = {path!r} is whileai_core code, and the "
            "prime-rl recipe's image (prime-rl's published image) does not contain whileai_core, "
            "so prime-rl's trainer would fail to import it on the GPU", fix="use a correction "
            "prime-rl ships (Async(..., correction='ipo')), or build an image with "
            "whileai_core installed into /app/.venv and launch it yourself")
