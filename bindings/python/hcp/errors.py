"""One exception class per hcp_status, each carrying the library's hcp_last_error() message."""


class HcpError(Exception):
    """Base of every error raised by the hcp bindings. ``status`` is the pinned C status value."""

    status = None

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status


class InvalidArgumentError(HcpError, ValueError):
    status = 1


class InvalidConfigError(HcpError, ValueError):
    status = 2


class BufferTooSmallError(HcpError):
    status = 3


class OutOfMemoryError(HcpError, MemoryError):
    status = 4


class HcpIOError(HcpError, OSError):
    """An input that could not be read: an OSError, so `except OSError` around a scan or a lint catches it."""

    status = 5


class HcpFileNotFoundError(HcpIOError, FileNotFoundError):
    """Every input that could not be read does not exist (errno ENOENT)."""


class ParseError(HcpError, ValueError):
    status = 6


class UnsupportedError(HcpError):
    status = 7


class CommError(HcpError):
    status = 8


class HcpTimeoutError(HcpError, TimeoutError):
    status = 9


class ShapeError(HcpError, ValueError):
    status = 10


class NotFoundError(HcpError, LookupError):
    status = 11


class InternalError(HcpError):
    status = 12


_BY_STATUS = {cls.status: cls for cls in (
    InvalidArgumentError, InvalidConfigError, BufferTooSmallError, OutOfMemoryError, HcpIOError, ParseError,
    UnsupportedError, CommError, HcpTimeoutError, ShapeError, NotFoundError, InternalError)}


def error_for_status(status, message):
    """The exception instance for a non-zero status (HcpError for a value this binding does not know)."""
    cls = _BY_STATUS.get(status, HcpError)
    return cls(message, status)
