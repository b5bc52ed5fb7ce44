"""Profiles: one named, swappable set of what models see beyond the task data (prompts, tool schemas, sampling, seeds)."""
