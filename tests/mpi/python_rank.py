"""One rank of a CP job in Python, started by mpirun: an hcp.MpiComm (from mpi4py's COMM_WORLD when mpi4py is
installed, else MPI_COMM_WORLD by hcp itself), a CpContext, forward and backward on this rank's dual chunks, and a
check of its rows against hcp.attention_simulate of the whole problem in process. Exit 0 when within 1e-5."""

import array
import random
import sys

import hcp

try:
    from mpi4py import MPI  # noqa: F401 - initialises MPI; hcp then uses the caller's communicator
    comm = hcp.MpiComm(MPI.COMM_WORLD)
    source = "mpi4py"
except ImportError:
    comm = hcp.MpiComm()
    source = "hcp"

B, H, D, CHUNK = 1, 2, 8, 4
n, rank = comm.size, comm.rank
S = 2 * n * CHUNK
rnd = random.Random(7)  # the same problem on every process
# Values exact in fp32, so that the rows this rank takes and the full tensors hold the same numbers.
q, k, v, dout = ([float(array.array("f", [rnd.uniform(-1, 1)])[0]) for _ in range(S * H * D)] for _ in range(4))

ctx = hcp.CpContext(comm, world_size=n, cp=n, comm="p2p")
r = ctx.cp_rank
rows = lambda full, width: sum((full[c * CHUNK * width:(c + 1) * CHUNK * width] for c in (r, 2 * n - 1 - r)), [])
local = (B, 2 * CHUNK, H, D)
out, lse = ctx.forward(array.array("f", rows(q, H * D)), array.array("f", rows(k, H * D)),
                       array.array("f", rows(v, H * D)), local, causal=True)
dq, dk, dv = ctx.backward(array.array("f", rows(q, H * D)), array.array("f", rows(k, H * D)),
                          array.array("f", rows(v, H * D)), out, lse, array.array("f", rows(dout, H * D)), local,
                          causal=True)
f32 = lambda x: array.array("f", x)
want = hcp.attention_simulate(f32(q), f32(k), f32(v), cp=1, shape=(B, S, H, D), causal=True, dout=f32(dout))
error = max(max(abs(a - b) for a, b in zip(got, rows(list(want[name]), H * D)))
            for got, name in ((out, "out"), (dq, "dq"), (dk, "dk"), (dv, "dv")))


def say(line):
    # One write per line: the ranks share the launcher's stdout, and print() writes the newline apart.
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


say(f"python rank {rank} of {n} ({source}): max error {error:.2e}")
# NCCL started over MPI: a communicator on a GPU machine; elsewhere every rank - not only rank 0, whose id could not
# be made - fails with UnsupportedError and a reason, rather than waiting for an id that will not come.
try:
    hcp.MpiComm(nccl=True).close()
    say(f"python rank {rank}: nccl over mpi: ok")
except hcp.UnsupportedError as e:
    say(f"python rank {rank}: nccl over mpi: unsupported: {e}")
ctx.close()
comm.close()
if source == "hcp":
    hcp.mpi_finalize()
sys.exit(0 if error <= 1e-5 else 1)
