from golden.console import exit_with

from .report import main

exit_with(main)
