"""The domain's scripted user: the kernel's, opening tau2's free-text scenarios without the stop tokens they mention.

tau2's banking_knowledge scenarios are free text that tells the simulated user when to write
`###STOP###` or `###TRANSFER###`. The kernel's scripted user opens with the scenario text, so those
mentions would end the conversation at its first message; this user opens with the same text,
the tokens taken out.
"""

from __future__ import annotations

import attrs

from bench_kernel import STOP_TOKENS, ConversationSetup, ScriptedUser, Task, UserSession

NAME = "banking_knowledge-scripted"


def opening_without_stop_tokens(task: Task) -> Task:
    """The task with a script of one line (its free-text scenario without stop tokens), when it needs one."""
    scenario = task.user_scenario
    if scenario.script or not isinstance(scenario.instructions, str):
        return task
    if not any(token in scenario.instructions for token in STOP_TOKENS):
        return task
    line = scenario.instructions
    for token in STOP_TOKENS:
        line = line.replace(token, "")
    return attrs.evolve(task, user_scenario=attrs.evolve(scenario, script=[line]))


@attrs.define(kw_only=True)
class BankingKnowledgeScriptedUser(ScriptedUser):
    """The kernel's scripted user for this domain's tasks."""

    name: str = NAME
    description: str = "The scripted user, opening free-text scenarios without the stop tokens they mention."

    def start(self, setup: ConversationSetup) -> UserSession:
        """A scripted session on the task as the scripted user should open it."""
        return ScriptedUser.start(self, attrs.evolve(setup, task=opening_without_stop_tokens(setup.task)))
