"""`python -m whileai_core.cli`: the same as the `whileai-skills` console script."""

import sys

from . import main

sys.exit(main())
