"""The hook specifications of bench: every hook only registers; the work is in the registered objects."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from bench_kernel.markers import hookspec

if TYPE_CHECKING:
    import click
    from sqlite_utils import Migrations

    from bench_kernel.evaluation.metric import Judge, Metric
    from bench_kernel.modelhub.api import Model
    from bench_kernel.tasks.domain import Domain
    from bench_kernel.conversation.participants import Agent, UserSimulator


# --------------------------------------------------------------------------- components


@hookspec
def register_domains(register: Callable[[Domain], None]) -> None:
    """Register the domains this plugin provides.

    Called once per plugin manager (once per run, and once per CLI invocation that
    lists components), in the main process. Must do no I/O: data is read in `Domain.load`.

    :param register: call with each :class:`bench_kernel.Domain` instance.

    Example::

        @bench_kernel.hookimpl
        def register_domains(register):
            register(MockDomain(name="mock"))
    """


@hookspec
def register_agents(register: Callable[[Agent], None]) -> None:
    """Register agents (or adapters to agent frameworks).

    Called once per plugin manager. Each :class:`bench_kernel.Agent` starts one
    session per conversation through ``Agent.start(setup)``.

    :param register: call with each agent instance; names must be unique.

    Example::

        @bench_kernel.hookimpl
        def register_agents(register):
            register(MyFrameworkAgent(name="my-framework"))
    """


@hookspec
def register_user_simulators(register: Callable[[UserSimulator], None]) -> None:
    """Register user simulators.

    Called once per plugin manager. Each :class:`bench_kernel.UserSimulator` starts one
    session per conversation.

    :param register: call with each user simulator instance.

    Example::

        @bench_kernel.hookimpl
        def register_user_simulators(register):
            register(PersonaUser(name="persona"))
    """


@hookspec
def register_models(register: Callable[[Model], None]) -> None:
    """Register model backends that agents, users and judges can reach by name.

    Called once per plugin manager. Registration must not open connections: a
    backend connects when its ``ModelClient`` is first used.

    :param register: call with each :class:`bench_kernel.Model` instance.

    Example::

        @bench_kernel.hookimpl
        def register_models(register):
            register(OpenAICompatible(name="local-qwen", base_url="http://127.0.0.1:8000/v1"))
    """


@hookspec
def register_judges(register: Callable[[Judge], None]) -> None:
    """Register judges for natural-language assertions and judge-based metrics.

    Called once per plugin manager. A run uses the judge named by ``--judge``.

    :param register: call with each :class:`bench_kernel.Judge` instance.

    Example::

        @bench_kernel.hookimpl
        def register_judges(register):
            register(LLMJudge(name="llm"))
    """


@hookspec
def register_metrics(register: Callable[[Metric], None]) -> None:
    """Register per-conversation metrics.

    Called once per plugin manager. Every registered metric scores every finished
    conversation of a run that loaded its plugin; a metric that raises is recorded
    against its name and never stops the run.

    :param register: call with each :class:`bench_kernel.Metric` instance.

    Example::

        @bench_kernel.hookimpl
        def register_metrics(register):
            register(TurnCount(name="turns"))
    """


@hookspec
def register_migrations(register: Callable[[Migrations], None]) -> None:
    """Register SQLite migration sets for tables this plugin stores.

    Called once per plugin manager, before the store opens. Each set is a
    ``sqlite_utils.Migrations`` named after the plugin's distribution; migrations are
    append-only: never edit or renumber one that has shipped.

    :param register: call with each ``Migrations`` set.

    Example::

        migrations = Migrations("bench-gsrt")

        @migrations(name="m001_create_shifts")
        def m001_create_shifts(db):
            db["gsrt_shifts"].create({"conversation_id": str, "turn": int}, pk=("conversation_id", "turn"))

        @bench_kernel.hookimpl
        def register_migrations(register):
            register(migrations)
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add commands or command groups to the ``bench`` CLI.

    Called once, in the ``bench`` entry point, after the built-in commands exist.

    :param cli: the root click group; add to it with ``@cli.command()`` or ``cli.add_command``.

    Example::

        @bench_kernel.hookimpl
        def register_commands(cli):
            @cli.group(name="telecom")
            def telecom(): ...
    """
