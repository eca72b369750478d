"""Run every ```python block of every skills/*/SKILL.md offline and print a verdict per skill.

(Skills arrive with the skills issue; with none present this prints that and exits 0.)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def main() -> int:
    skills = sorted(p.parent.name for p in (ROOT / "skills").glob("*/SKILL.md"))
    if not skills:
        print("no skills yet: nothing to check")
        return 0
    print(f"{len(skills)} skills found but no runner yet")
    return 1


if __name__ == "__main__":
    sys.exit(main())
