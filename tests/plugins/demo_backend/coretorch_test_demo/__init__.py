"""A tiny third-party coretorch plugin, installed by `make test` for the plugin tests.

It defines the op ``ctdemo::scaled_sum(x, factor) = (x * factor).sum()`` in its own namespace,
with a CompositeImplicitAutograd kernel (every backend) and a direct CPU kernel, and allocates a
dispatch key of its own (``CtDemo``) with a kernel and a boxed fallback there. It registers no
device type, so device-parametrized tests never run on it.
"""

__version__ = "0.1.0"
