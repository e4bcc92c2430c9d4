"""The model zoo: small versions of well-known PyTorch programs, trained a few steps from
committed weights and fixed batches, their losses compared with PyTorch's (tests/test_zoo.py)."""
