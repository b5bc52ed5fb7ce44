"""`bench new`: writes a ready plugin distribution of one kind from the templates packaged here (see new.py)."""

KINDS: dict[str, str] = {
    "domain": "a domain: a small database with tools, a policy and tasks with gold actions",
    "metric": "a metric: a value per conversation, a run-level summary and a report section",
    "channel": "a channel: what changes between what the user says and what the agent hears",
    "agent": "an agent: a rule-based agent that answers with its tools",
    "user": "a user simulator: plays the task's customer without a model",
    "judge": "a judge: checks the natural-language assertions of tasks",
    "executor": "an executor: decides how a run's conversations are played",
    "section": "a report section: a table that `bench report` shows",
}
"""The kinds of plugin `bench new` writes, with what each is (its templates are in templates/KIND)."""
