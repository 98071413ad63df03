"""The settings every command shares, for callers of the API (and the CLI): where results are
cached, what one file's analysis may take, how a file's module name is found, which files of a
folder are scanned, which kernel sets `apply` knows."""

from adopter.extract.sources import ModuleNames
from adopter.extract.walk import Selection
from adopter.rewrite.kernel_sets import KERNEL_SETS, LEFT_OUT
from adopter.support.cache import DEFAULT_DIR as DEFAULT_CACHE
from adopter.support.forks import Limits

__all__ = ["DEFAULT_CACHE", "KERNEL_SETS", "LEFT_OUT", "Limits", "ModuleNames", "Selection"]
