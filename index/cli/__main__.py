import sys

from index.cli import main

sys.exit(main())
