"""Why the rewriter leaves a match alone: its own module, so that what only names kernel sets
(the command line's options) does not load libcst."""


class Unsafe(Exception):
    """The rewriter cannot transform a match safely; the reason is the message."""
