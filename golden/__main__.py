from .cli import main
from .console import exit_with

exit_with(main)
