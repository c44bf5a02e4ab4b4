"""The plan's cost model against MPI processes: `plan_model_bench --mpi` under mpirun counts the bytes every rank
sends in each scheme's forward + backward on the MPI communicator and exits 1 when any count differs from the
model's (cp_cost.hpp). The in-process twin is the ctest plan_model_bytes.

Environment: PLAN_MODEL_BENCH (the benchmark), MPIEXEC (the launcher)."""

import os
import subprocess
import unittest

MPIEXEC = os.environ.get("MPIEXEC", "mpirun")
BENCH = os.environ.get("PLAN_MODEL_BENCH")
# Open MPI refuses root without the flag, and more processes than cores without --oversubscribe.
LAUNCH = [MPIEXEC, "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])


@unittest.skipUnless(BENCH, "PLAN_MODEL_BENCH is not set (ctest sets it)")
class PlanModelBytes(unittest.TestCase):
    def test_every_scheme_sends_the_models_bytes(self):
        done = subprocess.run([*LAUNCH, "-np", "8", BENCH, "--mpi", "--seq", "256", "--heads", "8", "--head-dim",
                               "32", "--repeat", "1"], capture_output=True, text=True, timeout=600)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr[-3000:])
        self.assertEqual(done.stdout.count("= counted"), 5, done.stdout)
        self.assertNotIn("!= counted", done.stdout)


if __name__ == "__main__":
    unittest.main()
