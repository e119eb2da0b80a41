"""The frozen bundle's entry point: the same ``main`` as the ``react-sandbox`` command."""

import sys

from sandbox_app.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
