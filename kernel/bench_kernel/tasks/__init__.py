"""Tasks: the task model, task files and the domains that host them (where a unit of work starts)."""
