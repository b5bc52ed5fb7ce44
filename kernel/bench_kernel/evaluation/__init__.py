"""Evaluation: reward components and combination rules, metrics with context, judges, statistics."""
