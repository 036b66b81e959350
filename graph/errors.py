"""The one exception type the CLI turns into a one-line message and a non-zero exit."""


class KgqaError(Exception):
    """A problem the user can act on; the message is printed as is, on one line."""
