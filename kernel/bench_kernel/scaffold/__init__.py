"""`bench new`: writes a ready plugin distribution of one kind from the templates packaged here (see new.py)."""

KINDS: dict[str, str] = {
    "domain": "a domain: a small database with tools, a policy and tasks with gold actions",
    "metric": "a metric: a value per conversation, a run-level summary and a report section",
    "channel": "a channel: what changes between what the user says and what the agent hears",
    "agent": "an agent: `async def answer(messages, tools)` over OpenAI chat messages (a rule-based example)",
    "user": "a user simulator: plays the task's customer without a model",
    "judge": "a judge: checks the natural-language assertions of tasks",
    "executor": "an executor: decides how a run's conversations are played",
    "section": "a report section: a table that `bench report` shows",
}
"""The kinds of plugin `bench new` writes, with what each is (its templates are in templates/KIND)."""


def new_help() -> str:
    """`bench new --help`: what it does, then one line per kind (click keeps a paragraph after \\b as it is)."""
    kinds = "\n".join(f"  {kind:<9} {what}" for kind, what in KINDS.items())
    return (
        "Write a ready plugin distribution bench-NAME of KIND into DIRECTORY (default ./NAME): it installs, passes "
        f"its own tests and runs as it is.\n\n\b\nKINDS:\n{kinds}\n\nEvery kind but a domain tests itself on the kernel's "
        "practice domain: `bench run --plugin practice --plugin NAME`."
    )
