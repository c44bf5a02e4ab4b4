"""hcp: hierarchical context parallelism toolkit (Python bindings over the C ABI, standard library only).

The native library is loaded from $HCP_LIBRARY, else from the build tree of a source checkout, else from the
system's library path.
"""

from ._native import lib as _lib
from .attention import (COMMS, DEVICES, MPI_COMM_WORLD, SOFTMAX_TYPES, CpContext, MpiComm, NcclComm, World,
                        attention_simulate, mpi_finalize, mpi_init, nccl_unique_id, packed_rank_indices, pad_for_cp)
from .callback_comm import CallbackComm, Collectives
from .errors import (BufferTooSmallError, CommError, HcpError, HcpFileNotFoundError, HcpIOError, HcpTimeoutError, InternalError,
                     InvalidArgumentError, InvalidConfigError, NotFoundError, OutOfMemoryError, ParseError,
                     ShapeError, UnsupportedError)
from .check import check
from .lint import Diagnostic, LintReport, lint, lint_report, lint_text, lint_text_report
from .logscan import LogReport, LogScanner, scan_logs
from .plan import plan
from .topology import GROUP_KINDS, ORDERS, Topology

__version__ = _lib.hcp_version_string().decode()

__all__ = [
    "attention_simulate", "World", "CpContext", "COMMS", "DEVICES", "SOFTMAX_TYPES", "NcclComm", "nccl_unique_id", "MpiComm",
    "MPI_COMM_WORLD", "mpi_init", "mpi_finalize", "packed_rank_indices", "pad_for_cp", "CallbackComm", "Collectives",
    "Topology", "GROUP_KINDS", "ORDERS", "check", "lint", "lint_report", "lint_text", "lint_text_report", "LintReport", "Diagnostic",
    "LogScanner", "LogReport", "scan_logs", "plan", "HcpError", "InvalidArgumentError", "InvalidConfigError",
    "BufferTooSmallError", "OutOfMemoryError", "HcpIOError", "HcpFileNotFoundError", "ParseError", "UnsupportedError", "CommError",
    "HcpTimeoutError", "ShapeError", "NotFoundError", "InternalError", "__version__",
]
