# prime-rl's published image at the commit whose config schema whileai_core's writer targets
# (559b447 = v0.8.1.dev67): Python 3.12, its venv at /app/.venv, a non-root user, an entrypoint
# that passes commands through.
FROM ghcr.io/primeintellect-ai/prime-rl:v0.8.1.dev67
USER root
# The image links /usr/local/bin/python to its own venv; Modal installs its client's interpreter
# at that same path in the step that runs after this file, and the existing link breaks it.
RUN rm -f /usr/local/bin/python /usr/local/bin/python3
# Modal runs its own command in the container; the image's pass-through entrypoint is not needed.
ENTRYPOINT []
WORKDIR /app
