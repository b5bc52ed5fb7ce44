"""A scripted world for tau2's domains on the kernel's fake OpenAI server: an LLM agent, an LLM user and a judge, played
by rules, so that bench runs of airline, retail and telecom under tau2's profile finish in seconds.

The user (model `scripted-user`) finds its task by the scenario in its system prompt and opens with the scenario's
words and a `<case>domain/id</case>` tag; afterwards it performs the device action an agent message asks for
("Please do this on your device: NAME(ARGS)") and stops otherwise. The agent (model `scripted-agent`) reads the tag and
replays the task's gold actions in order, its own as tool calls and the user's as requests, then states the facts to
communicate. With `fail_every=N` the agent leaves out its last step in about one (task, trial) in N (decided by the
request's seed, tau2's trial seed), so results are mixed. The judge (`scripted-judge`) finds every assertion met, naming
each by its number (bench's judge prompt) or repeating it (tau2's, under its profile).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bench_kernel import Task
from bench_kernel.testing import Reply

ASK = "Please do this on your device: "
CASE = re.compile(r"<case>(.+?)</case>")
CALL = re.compile(r"^(\w+)\((.*)\)$", re.S)


class ScriptedTau2World:
    """Answers chat requests by the model they name (scripted-agent, scripted-user, scripted-judge)."""

    def __init__(self, tasks: Mapping[str, Sequence[Task]], fail_every: int = 0) -> None:
        self.tasks = {f"{domain}/{t.id}": t for domain, ts in tasks.items() for t in ts}
        self.scenarios = [(t.user_scenario.render(), key) for key, t in self.tasks.items()]
        self.fail_every = fail_every

    def __call__(self, body: dict[str, Any]) -> Reply:
        model = body.get("model")
        if model == "scripted-judge":
            return judge_all_met(body["messages"][-1]["content"] or "")
        if model == "scripted-user":
            return self.user(body["messages"])
        return self.agent(body["messages"], body.get("seed"))

    def user(self, messages: list[dict[str, Any]]) -> Reply:
        """The customer: its case first, then the device actions it is asked for, then a stop."""
        own = [m for m in messages if m["role"] == "assistant"]
        if not own:
            system = messages[0]["content"]
            key = next((k for scenario, k in self.scenarios if scenario in system), None)
            reason = self.tasks[key].user_scenario.render().splitlines()[0] if key else "I need help."
            return Reply.text(f"{reason} <case>{key}</case>")
        last = messages[-1]
        if last["role"] == "tool":
            return Reply.text(f"I did that. It says: {last.get('content') or ''}")
        text = last.get("content") or ""
        if text.startswith(ASK):
            found = CALL.match(text[len(ASK) :].strip())
            if found:
                return Reply.tool_call(found.group(1), json.loads(found.group(2) or "{}"))
        return Reply.text("Thank you, that is all. ###STOP###")

    def agent(self, messages: list[dict[str, Any]], seed: int | None) -> Reply:
        """The agent: the task's gold actions in order, then the facts to communicate."""
        opening = next((m.get("content") or "" for m in messages if m["role"] == "user"), "")
        found = CASE.search(opening)
        task = self.tasks.get(found.group(1)) if found else None
        if task is None:
            return Reply.text("I cannot find your case. Goodbye.")
        steps = task.gold_actions()
        if self.fail_every and steps and _draw(found.group(1) if found else "", seed) % self.fail_every == 0:
            steps = steps[:-1]
        own = [m for m in messages if m["role"] == "assistant"]
        done = sum(len(m.get("tool_calls") or []) for m in own) + sum(1 for m in own if (m.get("content") or "").startswith(ASK))
        if done < len(steps):
            action = steps[done]
            if action.requestor == "user":
                return Reply.text(f"{ASK}{action.name}({json.dumps(action.arguments or {})})")
            return Reply.tool_call(action.name, action.arguments or {})
        facts = (task.evaluation_criteria.communicate_info or []) if task.evaluation_criteria else []
        return Reply.text("All done. " + " ".join(str(f) for f in facts))


def judge_all_met(question: str) -> Reply:
    """Every statement met: by number (bench's judge prompt), or repeating each one of a Python list (tau2's)."""
    listed = [line.strip() for line in question.splitlines() if line.strip().startswith("[")]
    if listed:
        statements = ast.literal_eval(listed[-1])
        return Reply.text(json.dumps({"results": [{"expectedOutcome": s, "reasoning": "said", "metExpectation": True} for s in statements]}))
    numbered = re.findall(r"^\s*\d+[.)]", question, re.M)
    return Reply.text(json.dumps({"verdicts": [{"index": i, "reasoning": "said", "met": True} for i in range(1, max(1, len(numbered)) + 1)]}))


def _draw(key: str, seed: int | None) -> int:
    return int(hashlib.sha256(f"{key}:{seed}".encode()).hexdigest()[:8], 16)


def serve(data: str, fail_every: int) -> None:
    """Serve the world for tau2's airline, retail and telecom (base split) from `data` on 127.0.0.1 until interrupted."""
    import time
    from pathlib import Path

    from bench_kernel import RunConfig, collect, get_plugin_manager, load_domain
    from bench_kernel.testing import FakeOpenAIServer

    tasks = {}
    for domain in ("airline", "retail", "telecom"):
        config = RunConfig(domain=domain, data_dir=str(Path(data) / domain), split="base" if domain == "telecom" else None)
        tasks[domain] = load_domain(collect(get_plugin_manager([domain])), config).tasks
    server = FakeOpenAIServer(
        ScriptedTau2World(tasks, fail_every=fail_every), record=False, models=["scripted-agent", "scripted-user", "scripted-judge"]
    )
    server.start()
    print(f"serving the scripted tau2 world at {server.base_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Serve the scripted agent, user and judge of tau2's domains.")
    parser.add_argument("--data", required=True, help="tau2's data: a directory with airline/, retail/, telecom/")
    parser.add_argument("--fail-every", type=int, default=5, help="leave out the agent's last step in about 1 (task, trial) in N")
    args = parser.parse_args()
    serve(args.data, args.fail_every)
