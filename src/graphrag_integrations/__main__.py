"""``python -m graphrag_integrations``: the ``graphrag-integrations`` command."""

import sys

from graphrag_integrations.cli.entry import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
