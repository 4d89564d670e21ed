"""``python -m cranax.tour``: runs the tour (see ``cranax.tour``)."""
import sys

from .runner import main

sys.exit(main())
