"""GPU recipes on Modal, each with an offline path (``run.py --smoke``) that needs no key and no GPU."""
