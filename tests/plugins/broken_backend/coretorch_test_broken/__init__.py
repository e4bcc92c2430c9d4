"""A coretorch plugin that is broken on purpose: importing its plugin module raises."""
