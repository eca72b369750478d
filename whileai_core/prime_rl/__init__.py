"""prime-rl configs pinned to commit 559b447: the writer and our own schema check.

- :func:`prime_rl_config` writes a runnable ``rl`` TOML for a taskset and a method, with where
  every knob landed, what prime-rl ignores and why, warnings and the launch command;
- :func:`validate_config` checks a (hand-edited) TOML against the schema subset we model.
"""

from __future__ import annotations

from .result import GPUSplit, PrimeRLConfig
from .schema import ConfigCheck, validate_config
from .shipping import custom_loss_import, refuse_unshipped_loss
from .writer import (REVERSE_TEXT_CAVEATS, REVERSE_TEXT_STUDENT, REVERSE_TEXT_TEACHER,
                     REVERSE_TEXT_TEACHER_URL, prime_rl_config, reverse_text_arms)

__all__ = ["REVERSE_TEXT_CAVEATS", "REVERSE_TEXT_STUDENT", "REVERSE_TEXT_TEACHER",
           "REVERSE_TEXT_TEACHER_URL", "ConfigCheck", "GPUSplit", "PrimeRLConfig", "custom_loss_import",
           "prime_rl_config", "refuse_unshipped_loss", "reverse_text_arms", "validate_config"]
