"""coretorch-nccl-cupy: the ``nccl`` process-group backend (cuda tensors, cupy.cuda.nccl)."""
