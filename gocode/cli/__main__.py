"""``python -m gocode.cli``."""

from gocode.cli import main

main()
