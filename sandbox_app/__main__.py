"""``python -m sandbox_app`` is the same as ``react-sandbox``."""

import sys

from sandbox_app.cli.main import main

sys.exit(main())
