"""The meta backend: tensors with shapes, dtypes and strides but no data.

Every structured op works here because the core runs the op's meta rule and "allocates" the
output; the kernels have nothing to compute. Allocations are still counted, so the profiler's
memory accounting tells what a model would need without running it.
"""

__version__ = "0.1.0"
