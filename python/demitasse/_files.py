"""Checks of user-given paths, so a missing file is a FileNotFoundError (an
OSError, pycaffe's IOError) naming it rather than a parse error."""
import errno
import os


def require_file(path, what):
    """`path` as a str; FileNotFoundError naming it and `what` it should be
    when it is not a readable file."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(errno.ENOENT, f"{what} not found", path)
    return path
