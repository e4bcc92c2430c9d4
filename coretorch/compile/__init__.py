"""Capture and replay of training steps, and the elementwise fusion replay uses (`fusion`)."""
