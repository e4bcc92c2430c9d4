"""coretorch-mpi: the ``mpi`` process-group backend (cpu tensors, mpi4py)."""
