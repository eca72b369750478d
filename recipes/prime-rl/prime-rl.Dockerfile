# prime-rl's published image at the commit whose config schema whileai_core's writer targets
# (559b447 = v0.8.1.dev67): Python 3.12, its venv at /app/.venv, a non-root user, an entrypoint
# that passes commands through.
FROM ghcr.io/primeintellect-ai/prime-rl:v0.8.1.dev67
USER root
# /usr/local/bin/python is the image's convenience link to /usr/bin/python3.12; Modal installs its
# client's interpreter at that path in the step after this file, and the existing link breaks it.
# prime-rl's own venv (/app/.venv, built on /usr/bin/python3.12) is left as it is: the recipe runs
# it with `uv run --no-sync` and prints `readlink -f /app/.venv/bin/python` in --validate.
RUN rm -f /usr/local/bin/python /usr/local/bin/python3
# Modal runs its own command in the container; the image's pass-through entrypoint is not needed.
ENTRYPOINT []
WORKDIR /app
