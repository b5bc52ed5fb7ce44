"""Print, as one JSON document, what a tau2 install sends a model: `bench tau2 profile` runs this inside the user's tau2 Python.

This file is run by path with the tau2 install's own interpreter: it uses only the standard library and tau2, runs on
Python 3.10+ and imports nothing of bench. Texts are read from tau2's own classes, instantiated with sentinel values
that are then replaced by `{{placeholder}}`s; every template is rendered back, with the sentinels it was made from and
with a second set, and compared with tau2's output for each byte for byte before anything is printed. On failure the
last line of stderr is `error: <why>` and the exit status 3.
"""

from __future__ import annotations

import os
import sys

# Run by path, this file's folder (bench_tau2) would come first on sys.path and shadow modules of tau2's environment.
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]

import argparse
import contextlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import json
import re
import urllib.parse
import urllib.request
from typing import Any

DUMP_FORMAT = 1
PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")
MARKER = "benchsentinel"
"""Every sentinel contains this (in some case): a template that still does after templating shows a transformed value."""
LLM = "bench-profile-dump"
"""The model name given to tau2's classes; nothing is ever sent."""


class DumpError(Exception):
    """What this tau2 gives cannot be turned into a profile; the message says why."""


def render(template: str, values: dict[str, str]) -> str:
    """Replace each {{name}} of `values` in one pass (a replaced value is never scanned again), as bench does."""
    return PLACEHOLDER.sub(lambda m: values[m.group(1)] if m.group(1) in values else m.group(0), template)


def templatize(key: str, text: str, sentinels: dict[str, str]) -> str:
    """`text` with each sentinel value replaced by its {{placeholder}} (longest first, one pass)."""
    literal = PLACEHOLDER.search(text)
    if literal:
        raise DumpError(f"text {key!r}: tau2's output contains {literal.group(0)} itself, which a profile template cannot hold literally")
    by_value = {value: "{{" + name + "}}" for name, value in sentinels.items()}
    template = text
    if by_value:
        pattern = re.compile("|".join(re.escape(v) for v in sorted(by_value, key=len, reverse=True)))
        template = pattern.sub(lambda m: by_value[m.group(0)], text)
    if MARKER in template.lower():
        raise DumpError(
            f"text {key!r}: a sentinel value appears transformed in tau2's output (indented, stripped, "
            "re-cased or re-formatted), so bench could not reproduce it by replacing a placeholder"
        )
    return template


def check(key: str, template: str, values: dict[str, str], expected: str) -> None:
    """Abort unless rendering `template` with `values` gives tau2's `expected` byte for byte."""
    got = render(template, values)
    if got != expected:
        at = next((i for i, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b), min(len(got), len(expected)))
        raise DumpError(
            f"self-check failed for text {key!r}: the template rendered with sentinel values differs from "
            f"tau2's output at character {at} (template gives {got[at : at + 40]!r}, tau2 {expected[at : at + 40]!r})"
        )


def require(key: str, template: str, names: tuple[str, ...]) -> None:
    """Abort when a value tau2 must show (the policy, the scenario, ...) does not appear in a template."""
    for name in names:
        if "{{" + name + "}}" not in template:
            raise DumpError(f"text {key!r}: the {name} given to tau2 does not appear in its output")


# Two sets of sentinels: templates are made from the first and must reproduce tau2's output for both, so a text
# that depends on a value other than by showing it (its length, a prefix) is caught. Multi-line, with outer
# whitespace and no digits: indenting, stripping or re-wrapping one shows, and a plan step's number never hides in one.
FIRST = {
    "policy": "\n BenchSentinelPolicyHead\nBenchSentinelPolicyTail \n",
    "ticket": "\n BenchSentinelTicketHead\nBenchSentinelTicketTail \n",
    "scenario": "\n BenchSentinelScenarioHead\nBenchSentinelScenarioTail \n",
    "done_tool": "benchsentinel_done_tool",
    "agent_step": "benchsentinel_agent_step",
    "user_step": "benchsentinel_user_step",
}
FIRST_ARGUMENTS = {"assistant": {"benchsentinel_alpha": "benchsentinel_beta"}, "user": {"benchsentinel_gamma": "benchsentinel_delta"}}
SECOND = {
    "policy": "\t\tBenchSentinelOtherPolicy\n\n  BenchSentinelOtherPolicyEnd\n\n",
    "ticket": "  BenchSentinelOtherTicket\n\tBenchSentinelOtherTicketEnd",
    "scenario": "BenchSentinelOtherScenario\n\n\tBenchSentinelOtherScenarioEnd  ",
    "done_tool": "benchsentinel_finish",
    "agent_step": "benchsentinel_act",
    "user_step": "benchsentinel_ask",
}
SECOND_ARGUMENTS = {
    "assistant": {"benchsentinel_epsilon": "benchsentinel_zeta", "benchsentinel_eta": "benchsentinel_theta"},
    "user": {"benchsentinel_iota": "benchsentinel_kappa", "benchsentinel_lambda": "benchsentinel_mu"},
}


def action(sentinels: dict[str, str], requestor: str) -> dict[str, Any]:
    """A sentinel plan action of the assistant or the user (the second set has two arguments)."""
    step = sentinels["agent_step" if requestor == "assistant" else "user_step"]
    arguments = (FIRST_ARGUMENTS if sentinels is FIRST else SECOND_ARGUMENTS)[requestor]
    return {"action_id": f"{step}-id", "requestor": requestor, "name": step, "arguments": dict(arguments)}


def make_task(actions: list[dict[str, Any]], ticket: str | None = None) -> Any:
    """A minimal valid tau2 Task with these actions as its evaluation criteria."""
    from tau2.data_model.tasks import Task

    data: dict[str, Any] = {
        "id": "benchsentinel-task",
        "user_scenario": {"instructions": "benchsentinel scenario"},
        "evaluation_criteria": {"actions": actions},
    }
    if ticket is not None:
        data["ticket"] = ticket
    return Task.model_validate(data)


def agent_text() -> dict[str, str]:
    """`agent`: LLMAgent's system prompt with the policy as {{policy}}."""
    from tau2.agent.llm_agent import LLMAgent

    prompts = [LLMAgent(tools=[], domain_policy=s["policy"], llm=LLM).system_prompt for s in (FIRST, SECOND)]
    template = templatize("agent", prompts[0], {"policy": FIRST["policy"]})
    require("agent", template, ("policy",))
    for sentinels, prompt in zip((FIRST, SECOND), prompts, strict=True):
        check("agent", template, {"policy": sentinels["policy"]}, prompt)
    return {"agent": template}


def solo_agent(sentinels: dict[str, str]) -> Any:
    """An LLMSoloAgent over no domain tools, with a sentinel policy and ticket."""
    from tau2.agent.llm_agent import LLMSoloAgent

    task = make_task([action(sentinels, "assistant")], ticket=sentinels["ticket"])
    return LLMSoloAgent(tools=[], domain_policy=sentinels["policy"], task=task, llm=LLM)


def done_tool(agent: Any) -> Any:
    """The one tool LLMSoloAgent adds to the tools it is given (its stop tool)."""
    if len(agent.tools) != 1:
        raise DumpError(f"LLMSoloAgent given no tools has {len(agent.tools)} tools; expected exactly its stop tool")
    return agent.tools[0]


def solo_prompt(agent: Any, stop_name: str | None) -> str:
    """The solo agent's prompt, with its stop tool named `stop_name` where the prompt names it (None: as it is)."""
    if stop_name is None:
        return str(agent.system_prompt)
    agent.STOP_FUNCTION_NAME = stop_name  # on the instance only: the class keeps its own
    try:
        return str(agent.system_prompt)
    finally:
        del agent.STOP_FUNCTION_NAME


def solo_text(done_name: str) -> dict[str, str]:
    """`agent_solo`: LLMSoloAgent's prompt with {{policy}}, {{ticket}} and, where it names its stop tool, {{done_tool}}."""
    agents = {id(s): solo_agent(s) for s in (FIRST, SECOND)}
    # Only when the class names its stop tool as the tool is named can the prompt's mention be the tool's name.
    names_tool = getattr(agents[id(FIRST)], "STOP_FUNCTION_NAME", None) == done_name
    keys = ("policy", "ticket", "done_tool") if names_tool else ("policy", "ticket")
    template = ""
    for sentinels in (FIRST, SECOND):
        agent = agents[id(sentinels)]
        prompt = solo_prompt(agent, sentinels["done_tool"] if names_tool else None)
        values = {k: sentinels[k] for k in keys}
        template = template or templatize("agent_solo", prompt, values)
        check("agent_solo", template, values, prompt)
        check("agent_solo", template, {**values, "done_tool": done_name}, solo_prompt(agent, None))
    require("agent_solo", template, ("policy", "ticket"))
    return {"agent_solo": template}


def gt_agent(sentinels: dict[str, str], requestors: tuple[str, ...]) -> tuple[str, str]:
    """LLMGTAgent's system prompt and its resolution steps for a task with sentinel actions of these requestors."""
    from tau2.agent.llm_agent import LLMGTAgent

    task = make_task([action(sentinels, r) for r in requestors])
    agent = LLMGTAgent(tools=[], domain_policy=sentinels["policy"], task=task, llm=LLM)
    return agent.system_prompt, agent.make_agent_instructions_from_actions()


def action_values(act: dict[str, Any], n: int) -> dict[str, str]:
    """What bench puts in a plan step's placeholders for one action (`call` as tau2's Action.get_func_format)."""
    from tau2.data_model.tasks import Action

    call = Action.model_validate(act).get_func_format()
    return {"n": str(n), "name": act["name"], "call": call, "arguments": json.dumps(act["arguments"], sort_keys=True)}


def number_positions(first: str, second: str, key: str) -> set[int]:
    """Where a step rendered as step 1 and as step 2 differ: the places of its number."""
    diffs = {i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b}
    if len(first) != len(second) or any((first[i], second[i]) != ("1", "2") for i in diffs):
        raise DumpError(f"text {key!r}: tau2's plan steps differ by more than their number between positions 1 and 2")
    return diffs


def step_template(key: str, first: str, second: str, act: dict[str, Any]) -> str:
    """One plan step's template: the step number as {{n}}, the action's call, arguments and name as theirs."""
    positions = number_positions(first, second, key)
    numbered = "".join("\0" if i in positions else ch for i, ch in enumerate(first))
    values = action_values(act, 1)
    template = templatize(key, numbered, {k: values[k] for k in ("call", "arguments", "name")})
    return template.replace("\0", "{{n}}")


def plan_texts() -> dict[str, str]:
    """`agent_plan`, `plan_step_agent`, `plan_step_user` and `plan_separator` from LLMGTAgent's resolution steps."""
    _, agent_1 = gt_agent(FIRST, ("assistant",))
    _, user_1 = gt_agent(FIRST, ("user",))
    prompt_au, plan_au = gt_agent(FIRST, ("assistant", "user"))
    _, plan_ua = gt_agent(FIRST, ("user", "assistant"))
    if not (plan_au.startswith(agent_1) and plan_ua.startswith(user_1)):
        raise DumpError("text 'agent_plan': a plan of two steps does not start with its first step as rendered alone")
    rest_au, rest_ua = plan_au[len(agent_1) :], plan_ua[len(user_1) :]
    separator = rest_au[: len(rest_au) - len(user_1)]
    if rest_ua[: len(rest_ua) - len(agent_1)] != separator:
        raise DumpError("text 'plan_separator': tau2 separates an agent step and a user step differently")
    texts = {
        "plan_step_agent": step_template("plan_step_agent", agent_1, rest_ua[len(separator) :], action(FIRST, "assistant")),
        "plan_step_user": step_template("plan_step_user", user_1, rest_au[len(separator) :], action(FIRST, "user")),
        "plan_separator": templatize("plan_separator", separator, {}),
        "agent_plan": templatize("agent_plan", prompt_au, {"plan": plan_au, "policy": FIRST["policy"]}),
    }
    require("agent_plan", texts["agent_plan"], ("policy", "plan"))
    for sentinels in (FIRST, SECOND):
        for requestors in (("assistant", "user"), ("user", "assistant"), ("assistant", "user", "assistant")):
            prompt, _ = gt_agent(sentinels, requestors)
            plan = render_plan(texts, [action(sentinels, r) for r in requestors])
            check("agent_plan", texts["agent_plan"], {"policy": sentinels["policy"], "plan": plan}, prompt)
    return texts


def render_plan(texts: dict[str, str], actions: list[dict[str, Any]]) -> str:
    """A plan as bench renders it from the step templates."""
    steps = [
        render(texts["plan_step_user" if a["requestor"] == "user" else "plan_step_agent"], action_values(a, n))
        for n, a in enumerate(actions, start=1)
    ]
    return render(texts["plan_separator"], {}).join(steps)


def user_simulator_class(name: str | None) -> Any:
    """tau2's UserSimulator, or the user simulator its registry has under `name`."""
    if name is None:
        from tau2.user.user_simulator import UserSimulator

        return UserSimulator
    from tau2.registry import registry

    try:
        return registry.get_user_constructor(name)
    except Exception as exc:
        raise DumpError(f"no user simulator {name!r} in tau2's registry ({one_line(exc)})") from exc


def user_texts(user_class: Any, tool: Any) -> dict[str, str]:
    """`user` and `user_tools`: the user simulator's prompt without and with tools, the scenario as {{scenario}}."""
    texts: dict[str, str] = {}
    for key, tools in (("user", None), ("user_tools", [tool])):
        for sentinels in (FIRST, SECOND):
            try:
                prompt = str(user_class(llm=LLM, instructions=sentinels["scenario"], tools=tools).system_prompt)
            except OSError as exc:
                raise DumpError(f"tau2's user simulator could not read its guidelines ({one_line(exc)}); point --data-dir at tau2's data") from exc
            texts.setdefault(key, templatize(key, prompt, {"scenario": sentinels["scenario"]}))
            check(key, texts[key], {"scenario": sentinels["scenario"]}, prompt)
        require(key, texts[key], ("scenario",))
    return texts


def domain_tools(name: str) -> dict[str, Any]:
    """One domain's agent tools (in the order tau2 sends them) and user tools (None when it has none)."""
    from tau2.registry import registry

    if name == KNOWLEDGE_DOMAIN:
        return knowledge_tools()
    environment = registry.get_env_constructor(name)()
    agent = [tool.openai_schema for tool in environment.get_tools()]
    try:
        user = [tool.openai_schema for tool in environment.get_user_tools()] or None
    except Exception:  # noqa: BLE001 - as tau2 builds its user: a domain whose user tools raise gives the user none
        user = None
    json.dumps([agent, user])  # plain JSON or fail here, naming the domain
    return {"agent": agent, "user": user}


KNOWLEDGE_DOMAIN = "banking_knowledge"
PROBE_TOOL = "zqprobe_tool_0001"
PROBE = {
    "description": "ZQDESC one.",
    "p1": "zqalpha",
    "t1": "zqtype1",
    "d1": "ZQFIRST param.",
    "p2": "zqbeta",
    "t2": "zqtype2",
    "d2": "ZQSECOND param.",
}


def knowledge_tools() -> dict[str, Any]:
    """banking_knowledge: every retrieval variant's agent tools in one order consistent with each variant's, the user's
    tools, and what discovering a hidden tool shows (per-tool texts parsed by tau2 itself, the message layouts)."""
    from tau2.domains.banking_knowledge import retrieval_toolkits
    from tau2.domains.banking_knowledge import tools as bk

    toolkits = [c for _, c in inspect.getmembers(retrieval_toolkits, inspect.isclass) if issubclass(c, bk.KnowledgeTools)]
    orders = [list(_tools_of(c)) for c in [bk.KnowledgeTools, *toolkits]]
    schemas = {name: tool.openai_schema for c in [bk.KnowledgeTools, *toolkits] for name, tool in _tools_of(c).items()}
    agent = [schemas[name] for name in merged_order(orders)]
    user = [tool.openai_schema for tool in _tools_of(bk.KnowledgeUserTools).values()]
    discoverable = {
        "agent": _discoverable_texts(bk, bk.KnowledgeTools),
        "user": _discoverable_texts(bk, bk.KnowledgeUserTools),
        "formats": {**discovery_formats(bk), **dense_instructions()},
    }
    json.dumps([agent, user, discoverable])
    return {"agent": agent, "user": user, "discoverable": discoverable}


def dense_instructions() -> dict[str, str]:
    """The sentence tau2's policy gives the dense search, per variant that has one (tau2 writes it in code)."""
    from tau2.domains.banking_knowledge import retrieval

    found = {}
    for name in sorted(retrieval.RETRIEVAL_VARIANTS):
        variant = retrieval.resolve_variant(name)
        if variant.kb_search_bm25 is not None and variant.kb_search_dense is not None:
            found[f"dense_instructions.{name}"] = retrieval.format_all_tools_dense_instructions(variant)
    return found


def _tools_of(toolkit: Any) -> dict[str, Any]:
    # The tool objects hang on the class; building an instance would start the variant's search backends.
    return dict(toolkit.__new__(toolkit).get_tools())


def merged_order(orders: list[list[str]]) -> list[str]:
    """One order of every name that keeps each list's own order (tau2 offers a variant's tools in its class's order)."""
    after: dict[str, set[str]] = {}
    for order in orders:
        for i, name in enumerate(order):
            after.setdefault(name, set()).update(order[:i])
    merged: list[str] = []
    pending = list(dict.fromkeys(name for order in orders for name in order))
    while pending:
        ready = next((n for n in pending if after[n] <= set(merged)), None)
        if ready is None:
            raise DumpError(f"banking_knowledge: the variants order their tools inconsistently: {orders}")
        merged.append(ready)
        pending.remove(ready)
    return merged


def _discoverable_texts(bk: Any, toolkit: Any) -> dict[str, Any]:
    found = {}
    for name, method in toolkit.__new__(toolkit).get_discoverable_tools().items():
        info = bk.parse_discoverable_tool_docstring(method)
        params = [
            {"name": p, "type": d["type"], "optional": not d["required"], "description": d["description"]} for p, d in info["parameters"].items()
        ]
        found[name] = {"description": info["description"], "params": params, "returns": info["success_message"]}
    return found


def discovery_formats(bk: Any) -> dict[str, str]:
    """The layouts of the unlock and give messages as templates, each checked against tau2's own output."""
    p = PROBE
    info = {
        "name": PROBE_TOOL,
        "description": p["description"],
        "parameters": {
            p["p1"]: {"type": p["t1"], "description": p["d1"], "required": True},
            p["p2"]: {"type": p["t2"], "description": p["d2"], "required": False},
        },
    }
    card = bk.format_discoverable_tool_for_agent(info)
    bare = bk.format_discoverable_tool_for_agent({**info, "parameters": {}})
    line1 = f"{p['p1']}: {p['t1']}"
    lines = card.split("\n")
    first = next(i for i, line in enumerate(lines) if line1 in line)
    required = _fields(lines[first], p["p1"], p["t1"], p["d1"])
    optional = _fields(lines[first + 1], p["p2"], p["t2"], p["d2"])
    params_text = "\n".join(lines[first : first + 2])
    card_template = _fields(card.replace(params_text, "{{params}}"), PROBE_TOOL, None, p["description"])
    no_params = bare[len(card_template.split("{{params}}")[0].replace("{{name}}", PROBE_TOOL).replace("{{description}}", p["description"])) :]
    formats = {"card": card_template, "param_required": required, "param_optional": optional, "param_separator": "\n", "no_params": no_params}
    named = {"name": PROBE_TOOL, "description": p["description"]}
    params = "\n".join(
        render(t, {**named, "name": n, "type": k, "description": d})
        for t, n, k, d in ((required, p["p1"], p["t1"], p["d1"]), (optional, p["p2"], p["t2"], p["d2"]))
    )
    check("banking_knowledge card", card_template, {**named, "params": params}, card)
    check("banking_knowledge card without parameters", card_template, {**named, "params": no_params}, bare)
    formats.update(_unlock_and_give(bk, card, info))
    return formats


def _fields(text: str, name: str, kind: str | None, description: str) -> str:
    out = text.replace(name, "{{name}}").replace(description, "{{description}}")
    return out.replace(kind, "{{type}}") if kind else out


def _unlock_and_give(bk: Any, card: str, info: dict[str, Any]) -> dict[str, str]:
    from tau2.environment.toolkit import ToolType, is_discoverable_tool

    p = PROBE

    def probe(self: Any, zqalpha: str, zqbeta: str = "") -> str:
        return ""

    probe.__doc__ = f"{p['description']}\n\nArgs:\n    {p['p1']} ({p['t1']}): {p['d1']}\n    {p['p2']} ({p['t2']}, optional): {p['d2']}\n"
    probe.__name__ = PROBE_TOOL
    tool = is_discoverable_tool(ToolType.WRITE)(probe)
    toolkit: Any = type("ProbeTools", (bk.KnowledgeTools,), {PROBE_TOOL: tool})
    agent = toolkit.__new__(toolkit)
    agent._agent_discoverable_tools_state = {}
    unlocked = agent.unlock_discoverable_agent_tool(PROBE_TOOL)
    if card not in unlocked:
        raise DumpError("banking_knowledge: the unlock message does not contain the tool card")
    unlock_template = _fields(unlocked.replace(card, "{{card}}"), PROBE_TOOL, None, p["description"])
    given = _give(bk, tool, agent, json.dumps({p["p1"]: "zqvalue"}))
    arguments = json.dumps({p["p1"]: "zqvalue"}, indent=2)
    give_template = _fields(given.replace(arguments, "{{arguments}}"), PROBE_TOOL, None, p["description"])
    head, _, tail = give_template.replace("{{name}}", PROBE_TOOL).replace("{{description}}", p["description"]).partition("{{arguments}}")
    empty = _give(bk, tool, agent, "{}")
    if not (empty.startswith(head) and empty.endswith(tail)):
        raise DumpError("banking_knowledge: the give message's layout depends on its arguments")
    no_arguments = empty[len(head) : len(empty) - len(tail)]
    named = {"name": PROBE_TOOL, "description": p["description"]}
    check("banking_knowledge unlocked", unlock_template, {**named, "card": card}, unlocked)
    check("banking_knowledge given", give_template, {**named, "arguments": arguments}, given)
    check("banking_knowledge given without arguments", give_template, {**named, "arguments": no_arguments}, empty)
    return {"unlocked": unlock_template, "given": give_template, "no_arguments": no_arguments}


def _give(bk: Any, tool: Any, agent: Any, arguments: str) -> str:
    from tau2.domains.banking_knowledge.environment import get_db

    agent.db = get_db()
    agent._user_discoverable_tools_state = {}
    setattr(bk.KnowledgeUserTools, PROBE_TOOL, tool)
    try:
        return str(agent.give_discoverable_user_tool(PROBE_TOOL, arguments))
    finally:
        delattr(bk.KnowledgeUserTools, PROBE_TOOL)


def all_tools(names: list[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The tools of every domain that builds, and the error of each that does not."""
    from tau2.registry import registry

    tools, failed = {}, {}
    for name in names or list(registry.get_domains()):
        try:
            tools[name] = domain_tools(name)
        except Exception as exc:  # noqa: BLE001 - a domain that does not build is reported by name and skipped
            failed[name] = one_line(exc)
    return tools, failed


JUDGE_MODULE = "tau2.evaluator.evaluator_nl_assertions"
"""Where tau2's NL-assertion judge lives; a tau2 without it gives no judge texts (bench's judge is kept)."""
JUDGE_LINES = {"user": "benchsentinel_user_line", "assistant": "benchsentinel_agent_line"}
JUDGE_STATEMENTS = ["benchsentinel statement one", 'benchsentinel it\'s "two"\n\tback\\slash caf\u00e9']
JUDGE_OTHER_STATEMENTS = ['benchsentinel "other"', "benchsentinel other's", "benchsentinel third"]


def judge_messages(history: list[Any], statements: list[str]) -> tuple[list[Any], dict[str, Any], list[Any]]:
    """What tau2's judge passes to `generate` for a history (caught before anything is sent), and what it read back
    from a reply in the form bench reads (each verdict repeating its statement: docs/judges.md)."""
    from tau2.data_model.message import AssistantMessage

    module = importlib.import_module(JUDGE_MODULE)
    caught: list[tuple[list[Any], dict[str, Any]]] = []
    reply = {"results": [{"expectedOutcome": s, "reasoning": "benchsentinel", "metExpectation": i % 2 == 0} for i, s in enumerate(statements)]}

    def generate(model: str, messages: list[Any], **kwargs: Any) -> Any:
        caught.append((messages, kwargs))
        return AssistantMessage(role="assistant", content=json.dumps(reply))

    original = getattr(module, "generate")  # noqa: B009 - the module is tau2's, typed as any module
    setattr(module, "generate", generate)  # noqa: B010
    try:
        checks = getattr(module, "NLAssertionsEvaluator").evaluate_nl_assertions(history, statements)  # noqa: B009
    finally:
        setattr(module, "generate", original)  # noqa: B010
    if len(caught) != 1:
        raise DumpError(f"tau2's NL-assertion judge called its model {len(caught)} times for one judgment")
    return caught[0][0], caught[0][1], list(checks)


def judge_history(contents: dict[str, str], tool_call: bool = False) -> list[Any]:
    """A history of sentinel messages: a user line, an agent line, and optionally an agent tool call and its result."""
    from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage

    history: list[Any] = [UserMessage(role="user", content=contents["user"])]
    if "assistant" in contents:
        history.append(AssistantMessage(role="assistant", content=contents["assistant"]))
    if tool_call:
        call = ToolCall(id="benchsentinel_call", name="benchsentinel_tool", arguments={}, requestor="assistant")
        history += [
            AssistantMessage(role="assistant", content=None, tool_calls=[call]),
            ToolMessage(id="benchsentinel_call", role="tool", content=contents["tool"], requestor="assistant"),
        ]
    return history


def judge_line(template: str, style: dict[str, Any], message: Any) -> str:
    """One message as bench's `lines` transcript shows it (bench-llm's judge_transcript)."""
    content = style["no_content"] if message.content is None else message.content
    return render(template, {"role": message.role, "content": content})


def judge_texts() -> tuple[dict[str, str], dict[str, Any]]:
    """`judge_system`, `judge_user`, `judge_line` and the [judge] style of tau2's NL-assertion judge ({} without one).

    Learnt from what tau2's judge would send for sentinel histories and statements; checked by rendering other
    histories and statements as bench would and comparing with tau2's messages byte for byte.
    """
    try:
        importlib.import_module(JUDGE_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name and JUDGE_MODULE.startswith(exc.name):
            return {}, {}
        raise
    (system, question), kwargs, _ = judge_messages(judge_history({"user": JUDGE_LINES["user"]}), JUDGE_STATEMENTS)
    at = question.content.find(JUDGE_LINES["user"])
    role_at = question.content.rfind("user", 0, at)
    if at < 0 or role_at < 0 or at - role_at > 12:
        raise DumpError("text 'judge_user': tau2's judge does not show a message as its role then its content")
    line = "{{role}}" + question.content[role_at + len("user") : at] + "{{content}}"
    tail = question.content[at + len(JUDGE_LINES["user"]) :]
    spacing = judge_spacing(line, tail)
    # What stands before the role on every line (e.g. "- ") ends the separator too: it belongs to the line.
    separator = spacing["line_separator"]
    lead = next(
        (k for k in range(len(separator), 0, -1) if "\n" not in separator[-k:] and question.content[role_at - k : role_at] == separator[-k:]), 0
    )
    if lead:
        line, spacing["line_separator"] = separator[-lead:] + line, separator[:-lead]
    first_line = question.content[role_at - lead : at + len(JUDGE_LINES["user"])]
    texts = {
        "judge_system": templatize("judge_system", system.content, {}),
        "judge_user": templatize("judge_user", question.content, {"transcript": first_line, "statements": repr(JUDGE_STATEMENTS)}),
        "judge_line": line,
    }
    require("judge_user", texts["judge_user"], ("transcript", "statements"))
    style = {
        "transcript": "lines",
        **spacing,
        "statements": "python_list",
        "verdicts": "echo",
        "response_format": "response_format" in kwargs,
        "seed": "seed" in kwargs,
    }
    check_judge(texts, style)
    return texts, style


def judge_spacing(line: str, tail: str) -> dict[str, str]:
    """The separator between two lines and what a message without content shows, from a longer history."""
    contents = {"user": JUDGE_LINES["user"], "assistant": JUDGE_LINES["assistant"], "tool": "benchsentinel_tool_result"}
    (_, question), _, _ = judge_messages(judge_history(contents, tool_call=True), JUDGE_STATEMENTS)
    text = question.content
    first_end = text.find(JUDGE_LINES["user"]) + len(JUDGE_LINES["user"])
    second = render(line, {"role": "assistant", "content": JUDGE_LINES["assistant"]})
    second_at = text.find(second, first_end)
    third = render(line, {"role": "assistant", "content": ""})
    third_at = text.find(third, second_at + len(second))
    fourth = render(line, {"role": "tool", "content": contents["tool"]})
    fourth_at = text.find(fourth, third_at)
    if min(second_at, third_at, fourth_at) < 0 or not text.endswith(tail):
        raise DumpError("text 'judge_line': tau2's judge does not show every message of the history as one line")
    separator = text[first_end:second_at]
    no_content = text[third_at + len(third) : fourth_at - len(separator)]
    return {"line_separator": separator, "no_content": no_content}


def check_judge(texts: dict[str, str], style: dict[str, Any]) -> None:
    """Abort unless bench's rendering of other histories and statements equals what tau2's judge would send."""
    contents = {"user": FIRST["scenario"], "assistant": SECOND["policy"], "tool": SECOND["ticket"]}
    for history, statements in (
        (judge_history(contents, tool_call=True), JUDGE_OTHER_STATEMENTS),
        (judge_history({"user": SECOND["scenario"]}), JUDGE_STATEMENTS[:1]),
    ):
        (system, question), _, checks = judge_messages(history, statements)
        if system.content != texts["judge_system"]:
            raise DumpError("self-check failed for text 'judge_system': tau2's judge changes it with the conversation")
        transcript = style["line_separator"].join(judge_line(texts["judge_line"], style, m) for m in history)
        check("judge_user", texts["judge_user"], {"transcript": transcript, "statements": repr(statements)}, question.content)
        read = [(c.nl_assertion, c.met) for c in checks]
        if read != [(s, i % 2 == 0) for i, s in enumerate(statements)]:
            raise DumpError(
                "tau2's judge does not read verdicts that repeat their statement (expectedOutcome, metExpectation) as bench's echo reading does"
            )


def sampling() -> dict[str, dict[str, Any]]:
    """Each role's default LLM arguments (the seed is the seed policy's, so it is left out)."""
    from tau2 import config

    roles = {"agent": "DEFAULT_LLM_ARGS_AGENT", "user": "DEFAULT_LLM_ARGS_USER", "judge": "DEFAULT_LLM_NL_ASSERTIONS_ARGS"}
    return {role: {k: v for k, v in dict(getattr(config, name)).items() if k != "seed"} for role, name in roles.items()}


def conversation(agent: Any) -> dict[str, Any]:
    """The greeting, whether the agent's own history holds it, the user's stop tokens and the solo agent's stop token."""
    from tau2.orchestrator.orchestrator import DEFAULT_FIRST_AGENT_MESSAGE
    from tau2.user import user_simulator

    return {
        "greeting": DEFAULT_FIRST_AGENT_MESSAGE.content,
        "greeting_in_agent_history": greeting_in_agent_history(DEFAULT_FIRST_AGENT_MESSAGE.content),
        "user_stop_tokens": [user_simulator.STOP, user_simulator.TRANSFER, user_simulator.OUT_OF_SCOPE],
        "solo_stop_token": agent.STOP_TOKEN,
    }


class StandInEnvironment:
    """What tau2's orchestrator asks of an environment while it opens a conversation, doing nothing."""

    solo_mode = False

    def set_state(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to set: the probe's task has no initial state."""

    def sync_tools(self) -> None:
        """No tools to sync."""


def greeting_in_agent_history(greeting: str) -> bool:
    """Whether tau2's orchestrator starts the agent's own history with the greeting (tau2 1.0.1 does, AgentChangeBench not).

    Learnt by opening a conversation with tau2's Orchestrator (its LLMAgent and UserSimulator, an environment that does
    nothing; no model is called) and reading the agent's initial state: the agent's requests depend on it.
    """
    from tau2.agent.llm_agent import LLMAgent
    from tau2.orchestrator.orchestrator import Orchestrator
    from tau2.user.user_simulator import UserSimulator

    agent = LLMAgent(tools=[], domain_policy=FIRST["policy"], llm=LLM)
    user = UserSimulator(llm=LLM, instructions=FIRST["scenario"], tools=None)
    try:
        orchestrator = Orchestrator(domain="benchsentinel", agent=agent, user=user, environment=StandInEnvironment(), task=make_task([]))
        orchestrator.initialize()
    except Exception as exc:
        raise DumpError(f"tau2's orchestrator could not open a conversation to show the agent's history ({one_line(exc)})") from exc
    contents = [getattr(m, "content", None) for m in getattr(orchestrator.agent_state, "messages", None) or []]
    if contents not in ([], [greeting]):
        raise DumpError(f"tau2's orchestrator opens the agent's history with {len(contents)} message(s) other than the greeting")
    return bool(contents)


DATA_VARIABLE = "TAU2_DATA_DIR"


def find_data_dir() -> str:
    """Where tau2's data is, setting TAU2_DATA_DIR when only pip's install record finds it; call before importing tau2.

    tau2 fixes its data directory at import: TAU2_DATA_DIR, else `data/` beside its source tree, which a pip
    (non-editable) install does not have. pip's record of an install from a local checkout (direct_url.json) names
    that checkout, whose `data/` is then used. A DumpError naming the variable when neither finds the data.
    """
    given = os.environ.get(DATA_VARIABLE)
    if given:
        if not os.path.isdir(os.path.join(given, "tau2")):
            raise DumpError(
                f"{DATA_VARIABLE}={given} holds no tau2/ folder: it must name tau2's data directory "
                "(the data/ folder of a tau2-bench checkout, with tau2/domains and tau2/user_simulator)"
            )
        return given
    spec = importlib.util.find_spec("tau2")
    if spec is None or not spec.origin:
        return ""  # no tau2 here: importing it reports that
    beside = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(spec.origin)))), "data")
    if os.path.isdir(os.path.join(beside, "tau2")):
        return beside  # an editable install or a checkout on sys.path: tau2 finds it itself
    recorded = installed_from()
    if recorded and os.path.isdir(os.path.join(recorded, "data", "tau2")):
        os.environ[DATA_VARIABLE] = os.path.join(recorded, "data")
        return os.environ[DATA_VARIABLE]
    checkout = f", and {recorded}, which pip installed it from, has no data/tau2" if recorded else ""
    raise DumpError(
        f"tau2's data directory was not found: tau2 reads it from {DATA_VARIABLE}, else from {beside}, which "
        f"does not exist (a pip install of tau2 does not copy its data{checkout}); "
        f"pass --data-dir DIR or set {DATA_VARIABLE}=DIR, DIR being the data/ folder of a tau2-bench checkout"
    )


def installed_from() -> str:
    """The local directory pip installed the tau2 distribution from, or "" (not pip, not a local directory)."""
    try:
        record = importlib.metadata.distribution("tau2").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return ""
    try:
        url = str(json.loads(record or "{}").get("url") or "")
    except (ValueError, AttributeError):
        return ""
    if not url.startswith("file://"):
        return ""
    return urllib.request.url2pathname(urllib.parse.urlparse(url).path)


def source() -> dict[str, Any]:
    """Where this tau2 is: version, location, Python and data directory."""
    import tau2

    try:
        version = importlib.metadata.version("tau2")
    except importlib.metadata.PackageNotFoundError:
        version = str(getattr(tau2, "__version__", "unknown"))
    try:
        data_dir = str(importlib.import_module("tau2.utils").DATA_DIR)
    except (ImportError, AttributeError):
        data_dir = os.environ.get("TAU2_DATA_DIR", "")
    from tau2 import config

    return {
        "package": "tau2",
        "version": version,
        "location": os.path.dirname(os.path.abspath(tau2.__file__)),
        "executable": sys.executable,
        "python_version": sys.version.split()[0],
        "data_dir": data_dir,
        "default_seed": config.DEFAULT_SEED,
    }


def dump(domains: list[str], user_simulator: str | None) -> dict[str, Any]:
    """Everything bench writes into a profile, read from this tau2."""
    try:
        import tau2  # noqa: F401
    except Exception as exc:
        raise DumpError(f"import tau2 failed: {one_line(exc)}") from exc
    solo = solo_agent(FIRST)
    done = done_tool(solo)
    texts = {**agent_text(), **solo_text(done.name), **plan_texts(), **user_texts(user_simulator_class(user_simulator), done)}
    judge, judge_style = judge_texts()
    texts.update(judge)
    tools, failed = all_tools(domains)
    return {
        "dump_format": DUMP_FORMAT,
        "source": source(),
        "texts": texts,
        "judge": judge_style,
        "tools": tools,
        "failed_domains": failed,
        "done_tool": done.openai_schema,
        "sampling": sampling(),
        "seed": {"policy": "trial"},
        "conversation": conversation(solo),
        "messages": message_style(wire_body(done)),
    }


PROBE_REPLY = {
    "id": "probe",
    "object": "chat.completion",
    "created": 0,
    "model": "probe",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


def wire_body(tool: Any) -> dict[str, Any]:
    """The JSON body tau2's own `generate` puts on the wire for a short history, caught by a loopback server.

    How a message is spelt (field order, `name` beside `function`, escaped arguments, a null content left out) is
    decided by tau2's client library, not tau2's text: sending one request is the only faithful way to learn it.
    """
    import http.server
    import threading

    from tau2.data_model.message import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
    from tau2.utils.llm_utils import generate

    caught: list[bytes] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            caught.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            body = json.dumps(PROBE_REPLY).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    call = ToolCall(id="call_probe", name=tool.name, arguments={"text": "caf\u00e9"}, requestor="assistant")
    history = [
        SystemMessage(role="system", content="probe"),
        UserMessage(role="user", content="probe"),
        AssistantMessage(role="assistant", content=None, tool_calls=[call]),
        ToolMessage(id="call_probe", role="tool", content="probe", requestor="assistant"),
    ]
    try:
        generate(
            model="gpt-4.1", messages=history, tools=[tool], api_base=f"http://127.0.0.1:{server.server_port}/v1", api_key="probe", num_retries=0
        )
    except Exception as exc:
        if not caught:
            raise DumpError(
                f"tau2's generate sent nothing to the probe (litellm {package_version('litellm')} in this Python): {one_line(exc)}"
            ) from exc
    finally:
        server.shutdown()
        server.server_close()
    if not caught:
        raise DumpError("tau2's generate sent nothing to the probe")
    return dict(json.loads(caught[0]))


def message_style(body: dict[str, Any]) -> dict[str, Any]:
    """The [messages] settings the probe's body shows, refusing a body whose top-level order bench cannot send."""
    keys = list(body)
    if keys[:2] != ["model", "messages"] or keys[2:] != sorted(keys[2:]):
        raise DumpError(
            f"tau2's request fields come in an order bench does not send: {keys}, from litellm "
            f"{package_version('litellm')} with openai {package_version('openai')} in this Python (the two decide "
            "the order, and it changes between releases); bench sends model, messages, then the rest in name "
            "order, as the litellm your tau2 pins does: install that one (AgentChangeBench's uv.lock: "
            "pip install litellm==1.75.4; tau2 1.0.1: litellm>=1.80.15,<1.82.7)"
        )
    caller = next(m for m in body["messages"] if m.get("tool_calls"))
    result = next(m for m in body["messages"] if m.get("role") == "tool")
    arguments = caller["tool_calls"][0]["function"]["arguments"]
    return {
        "tool_call_fields": list(caller["tool_calls"][0]),
        "tool_message_fields": list(result),
        "ascii_arguments": "\\u00e9" in arguments,
        "null_content": "content" in caller,
    }


def package_version(name: str) -> str:
    """The installed version of a distribution, or "(not installed)"."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def one_line(exc: BaseException) -> str:
    """An exception as one short line."""
    text = " ".join(str(exc).split()) or "(no message)"
    return f"{type(exc).__name__}: {text[:300]}"


def main(argv: list[str] | None = None) -> int:
    """Print the dump on stdout; on failure print `error: ...` as the last line of stderr and exit 3."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--domain", action="append", default=[], help="a domain of tau2's registry (repeatable)")
    parser.add_argument("--user-simulator", help="the registry name of the user simulator whose prompt to take")
    args = parser.parse_args(argv)
    out = sys.stdout
    try:
        with contextlib.redirect_stdout(sys.stderr):  # whatever tau2 prints must not mix with the JSON
            find_data_dir()
            document = dump(args.domain, args.user_simulator)
            text = json.dumps(document, ensure_ascii=False)
    except DumpError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    out.write(text + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
