"""``python -m whileai_core.operations``: write ``whileai_core/calls.json``, the table of every
operation's command, tool and shell form, from the declarations (``surface.call_table``).
``--check``: exit 1 when the file differs from what the declarations give."""

from __future__ import annotations

import json
import sys

from .calls import CALLS_FILE, call_table


def main(argv: list[str]) -> int:
    text = json.dumps(call_table(), indent=1, sort_keys=True) + "\n"
    if "--check" in argv:
        if not CALLS_FILE.is_file() or CALLS_FILE.read_text(encoding="utf-8") != text:
            print(f"{CALLS_FILE} differs from the declarations. Fix: python -m "
                  "whileai_core.operations", file=sys.stderr)
            return 1
        return 0
    CALLS_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {CALLS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
