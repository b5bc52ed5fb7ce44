"""`bench play`: a person plays one side of a conversation in the terminal; it is scored and stored like any run's.

The person is the policy of the same environment a program steps (driver.py), so what they see is an observation
(the other side's words, tool results; the instructions and the tools first) and what they type is an action:
text, a tool call `name {"arg": value}`, or a JSON message. Malformed input is explained and asked again.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import click

from bench_kernel import BenchError, ConfigError, db_option, domain_options, model_option_configs, plugin_option

from .config import OTHER_SIDE_DEFAULT, Side

PERSON = "human"
"""The name the person's side has in the run (its agent or user)."""
COMMANDS = {
    ":tools": "list the tools again",
    ":policy": "show the instructions again",
    ":help": "this help",
    ":quit": "leave without finishing (nothing of this conversation is stored)",
}
SPEAKERS = {
    "agent": {"user": "customer", "tool": "tool result", "assistant": "you"},
    "user": {"user": "agent", "tool": "device result", "assistant": "you"},
}
"""Who each chat role is, as the person's side sees it (the user side's chat has the roles flipped)."""


class Quit(Exception):
    """The person left."""


@click.command(name="play")
@plugin_option
@click.option("--as", "side", type=click.Choice(["agent", "user"]), default="agent", show_default=True, help="The side you play.")
@domain_options  # as `bench run` takes them; the domain defaults to the first --plugin
@click.option("--task-id", help="The task to play (default: the domain's first).")
@click.option("--mode", type=click.Choice(["default", "no-user", "oracle-plan"]), default="default", show_default=True)
@click.option("--agent", help=f"The agent opposite you, with --as user (default: {OTHER_SIDE_DEFAULT['user']}).")
@click.option("--user", help=f"The user simulator opposite you, with --as agent (default: {OTHER_SIDE_DEFAULT['agent']}).")
@click.option("--judge", help="Judge for NL assertions.")
@click.option("--model-option", "model_options", multiple=True, help="ROLE.KEY=VALUE for the other side's model (repeatable).")
@click.option("--profile", type=click.Path(file_okay=False, exists=True), help="A profile directory (docs/profiles.md).")
@click.option("--seed", type=int, default=300, show_default=True, help="The run's seed.")
@click.option("--trial", type=click.IntRange(0), help="Play this trial of the task (default: the next unplayed one).")
@click.option("--max-steps", type=click.IntRange(1), default=200, show_default=True)
@click.option("--run-id", help="Run id (default: derived from the configuration, so playing again adds a trial).")
@click.option("--no-baseline", is_flag=True, help="Skip the do-nothing baseline conversation of the task.")
@db_option
def play_command(
    plugins: tuple[str, ...],
    side: Side,
    domain: str | None,
    task_id: str | None,
    agent: str | None,
    user: str | None,
    model_options: tuple[str, ...],
    trial: int | None,
    no_baseline: bool,
    db_path: str,
    **settings: Any,
) -> None:
    """Play one side of a conversation in the terminal: it is scored and stored like any run's.

    You see the instructions, the tools and everything the other side says or your tools return; you type text, a
    tool call `name {"arg": value}`, or a JSON message (`{"content": ..., "tool_calls": [...]}`). As the customer,
    end the conversation with ###STOP###; as the agent working alone (--mode no-user), call `done`. The domain is the
    first --plugin's unless --domain names another.
    """
    from .driver import Driver

    wanted = [p for p in plugins if not p.startswith("no:")]
    if domain is None and not wanted:
        raise click.UsageError("name the domain's plugin: bench play --plugin DOMAIN")
    if (side == "agent" and agent) or (side == "user" and user):
        raise click.UsageError(f"you play the {side}: name the other side with --{'user' if side == 'agent' else 'agent'}")
    config = _config(domain or wanted[0], side, plugins, task_id, agent or user, model_options, no_baseline, db_path, settings)
    driver = Driver(config)
    try:
        _play(driver, task_id or next(iter(driver.tasks)), trial, side)
    except Quit:
        click.echo("You left: nothing of this conversation is stored.")
    finally:
        summary = driver.close()
    if summary is not None and config.db is not None:
        click.echo(f"Run {summary.run_id} in {db_path}: `bench report {summary.run_id} --db {db_path}` shows it.")


def _config(
    domain: str,
    side: Side,
    plugins: Sequence[str],
    task_id: str | None,
    other: str | None,
    model_options: Sequence[str],
    no_baseline: bool,
    db_path: str,
    settings: Mapping[str, Any],
) -> Any:
    from .config import gym_config

    other_side: dict[str, Any] = {"user" if side == "agent" else "agent": other}
    try:
        return gym_config(
            domain,
            side=side,
            task_id=task_id,
            plugins=plugins,
            db=db_path,
            baseline=not no_baseline,
            models=model_option_configs(list(model_options)),
            policy_name=PERSON,
            person=True,
            **other_side,
            **settings,
        )
    except BenchError:
        raise
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


def _play(driver: Any, task_id: str, trial: int | None, side: Side) -> None:
    from .driver import Act, Reset

    outcome = driver.advance({0: Reset(task_id, trial)})[0]
    opening = outcome.observation
    info = outcome.info
    click.echo(f"You are the {side} in task {info['task_id']} of domain {driver.config.domain} (trial {info['trial']}, run {info['run_id']}).")
    _show_instructions(opening)
    _show_tools(opening.get("tools") or [])
    click.echo(_hint(side, info))
    _show_messages(side, opening["messages"])
    if driver.over(0):  # it ended before your first turn: collect its end
        outcome = driver.advance({0: Act("")})[0]
    while not (outcome.terminated or outcome.truncated):
        outcome = driver.advance({0: Act(_read_action(opening, side))})[0]
        _show_messages(side, outcome.observation["messages"])
    _show_end(outcome.reward, outcome.info)


def _read_action(opening: Mapping[str, Any], side: Side) -> Any:
    """The next action the person types (commands answered, malformed input explained and asked again)."""
    from .actions import ActionError, action_message, call_ids

    names = [t["function"]["name"] for t in opening.get("tools") or []]
    while True:
        try:
            line = click.prompt("you", prompt_suffix="> ", default="", show_default=False).strip()
        except click.Abort:
            raise Quit from None
        if not line:
            continue
        if line in (":quit", ":q", ":exit"):
            raise Quit
        if line in COMMANDS:
            _command(line, opening)
            continue
        try:
            action = line_action(line, names)
            action_message(action, side, call_ids())  # checked here, so a typo never ends the conversation
        except (ActionError, ValueError) as exc:
            click.echo(f"  not sent: {exc}", err=True)
            continue
        return action


def line_action(line: str, tool_names: Sequence[str]) -> Any:
    """What a typed line means: a JSON message or tool call, `name {json args}` for a known tool, else text."""
    if line.startswith("{"):
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"not valid JSON: {exc}") from None
        if isinstance(value, dict) and "name" in value and not {"content", "tool_calls"} & set(value):
            return {"role": "assistant", "tool_calls": [value]}  # a bare tool call {"name": ..., "arguments": {...}}
        return value
    name, _, rest = line.partition(" ")
    if name not in tool_names:
        return line
    try:
        arguments: Any = json.loads(rest) if rest.strip() else {}
    except ValueError as exc:
        raise ValueError(f"the arguments of {name} are not valid JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise ValueError(f'the arguments of {name} are a JSON object: {name} {{"key": "value"}}')
    return {"role": "assistant", "tool_calls": [{"name": name, "arguments": arguments}]}


def _command(line: str, opening: Mapping[str, Any]) -> None:
    if line == ":tools":
        _show_tools(opening.get("tools") or [])
    elif line == ":policy":
        _show_instructions(opening)
    else:
        for command, what in COMMANDS.items():
            click.echo(f"  {command:8} {what}")


def _hint(side: Side, info: Mapping[str, Any]) -> str:
    ends = {"agent": "the customer ends the conversation", "user": f"end it with {(info.get('stop_tokens') or ['###STOP###'])[0]}"}
    if info.get("done_tool"):
        ends["agent"] = f"call {info['done_tool']} when the work is done"
    return f'Type text, a tool call `name {{"arg": value}}`, or a JSON message; {ends[side]}. :tools, :policy, :help, :quit.'


def _show_instructions(opening: Mapping[str, Any]) -> None:
    click.echo(click.style("--- instructions ---", bold=True))
    click.echo(opening.get("instructions") or "")
    click.echo(click.style("--- end of instructions ---", bold=True))


def _show_tools(tools: Sequence[Mapping[str, Any]]) -> None:
    if not tools:
        click.echo("You have no tools.")
        return
    click.echo(click.style("--- tools ---", bold=True))
    for tool in tools:
        function = tool["function"]
        properties = (function.get("parameters") or {}).get("properties") or {}
        required = set((function.get("parameters") or {}).get("required") or ())
        arguments = ", ".join(f"{name}{'' if name in required else '?'}: {_type(spec)}" for name, spec in properties.items())
        description = (function.get("description") or "").strip().splitlines()
        click.echo(f"  {function['name']}({arguments})" + (f"  {description[0]}" if description else ""))


def _type(spec: Mapping[str, Any]) -> str:
    if "enum" in spec:
        return "|".join(json.dumps(v) for v in spec["enum"])
    kind = spec.get("type", "any")
    return "|".join(kind) if isinstance(kind, list) else str(kind)


def _show_messages(side: Side, messages: Sequence[Mapping[str, Any]]) -> None:
    for message in messages:
        who = SPEAKERS[side].get(message.get("role", ""), message.get("role", "?"))
        if message.get("content"):
            click.echo(_wrapped(f"{who}: ", str(message["content"])))
        for call in message.get("tool_calls") or []:
            function = call.get("function", call)
            click.echo(f"{who} called {function.get('name')}({function.get('arguments')})")


def _wrapped(prefix: str, text: str) -> str:
    lines = text.splitlines() or [""]
    return "\n".join([prefix + lines[0], *(textwrap.indent(line, " " * len(prefix)) for line in lines[1:])])


def _show_end(reward: float, info: Mapping[str, Any]) -> None:
    components = ", ".join(f"{name} {score:g}" if score is not None else f"{name} -" for name, score in (info.get("components") or {}).items())
    click.echo(f"The conversation ended ({info.get('termination')}). Reward {reward:g}" + (f": {components}" if components else "."))
    if info.get("error"):
        click.echo(f"  error: {info['error']}")
    if info.get("stored"):
        click.echo(f"Stored as conversation {info['conversation_id']}.")
