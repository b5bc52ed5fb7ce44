"""The hook specifications of bench: every hook only registers; the work is in the registered objects."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from bench_kernel.markers import hookspec

if TYPE_CHECKING:
    import click
    from sqlite_utils import Migrations

    from bench_kernel.conversation.channels import Channel
    from bench_kernel.conversation.loops import ConversationLoop
    from bench_kernel.conversation.participants import Agent, UserSimulator
    from bench_kernel.evaluation.attribution import Attributor
    from bench_kernel.evaluation.metric import Judge, Metric
    from bench_kernel.evaluation.rewards import CombinationRule, RewardComponent
    from bench_kernel.evaluation.sections import ReportBuilder, ReportFormat, ReportSection
    from bench_kernel.modelhub.api import Model
    from bench_kernel.profiles.profile import ProfileReader
    from bench_kernel.run.context import Executor
    from bench_kernel.run.transforms import TaskTransform
    from bench_kernel.tasks.domain import Domain
    from bench_kernel.tasks.extensions import TaskExtension


# --------------------------------------------------------------------------- components


@hookspec
def register_domains(register: Callable[[Domain], None]) -> None:
    """Register the domains this plugin provides.

    Called once per plugin manager (once per run, and once per CLI invocation that lists components), in the main
    process. Must do no I/O: data is read in `Domain.load`.

    :param register: call with each :class:`bench_kernel.Domain` instance.

    Example::

        @bench_kernel.hookimpl
        def register_domains(register):
            register(MockDomain(name="mock"))
    """


@hookspec
def register_agents(register: Callable[[Agent], None]) -> None:
    """Register agents (or adapters to agent frameworks).

    Called once per plugin manager. Each :class:`bench_kernel.Agent` starts one session per conversation through
    ``Agent.start(setup)``.

    :param register: call with each agent instance; names must be unique.

    Example::

        @bench_kernel.hookimpl
        def register_agents(register):
            register(MyFrameworkAgent(name="my-framework"))
    """


@hookspec
def register_user_simulators(register: Callable[[UserSimulator], None]) -> None:
    """Register user simulators.

    Called once per plugin manager. Each :class:`bench_kernel.UserSimulator` starts one session per conversation.

    :param register: call with each user simulator instance.

    Example::

        @bench_kernel.hookimpl
        def register_user_simulators(register):
            register(PersonaUser(name="persona"))
    """


@hookspec
def register_models(register: Callable[[Model], None]) -> None:
    """Register model backends that agents, users and judges can reach by name.

    Called once per plugin manager. Registration must not open connections: a backend connects when its ``ModelClient``
    is first used.

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
    """Register metrics: per conversation (``await metric.score(context)``) and per run (``metric.summarize(view)``).

    Called once per plugin manager. Every registered metric scores every finished conversation of a run that loaded its
    plugin; a metric that raises is recorded against its name and never stops the run. Names are namespaced by plugin:
    two plugins may each register a metric called ``recovery``.

    :param register: call with each :class:`bench_kernel.Metric` instance.

    Example::

        @bench_kernel.hookimpl
        def register_metrics(register):
            register(TurnCount(name="turns"))
    """


@hookspec
def register_channels(register: Callable[[Channel], None]) -> None:
    """Register channels: the seam between user and agent that may transform what crosses it.

    Called once per plugin manager. A run uses the channel named by ``--channel`` (``identity`` by default); each
    conversation gets a session from ``Channel.start(setup)``.

    :param register: call with each :class:`bench_kernel.Channel` instance; names must be unique.

    Example::

        @bench_kernel.hookimpl
        def register_channels(register):
            register(VoiceChannel(name="voice"))
    """


@hookspec
def register_conversation_loops(register: Callable[[ConversationLoop], None]) -> None:
    """Register conversation loops: how conversations of a mode the kernel does not play itself are played.

    Called once per plugin manager. A run in ``--mode full-duplex`` plays each conversation with ``await
    loop.play(setup, env, agent, user, channel, ...)`` of the loop registered under the mode's name; without one it is
    refused before it starts, naming bench-duplex (which registers it, and which such a run loads).

    :param register: call with each :class:`bench_kernel.ConversationLoop` instance; names must be unique.

    Example::

        @bench_kernel.hookimpl
        def register_conversation_loops(register):
            register(FullDuplexLoop(name="full-duplex"))
    """


@hookspec
def register_reward_components(register: Callable[[RewardComponent], None]) -> None:
    """Register reward components that task files may name in ``reward_basis``.

    Called once per plugin manager. The kernel registers tau2's DB, ENV_ASSERTION, ACTION and COMMUNICATE this way,
    bench-judging NL_ASSERTION; a task naming a component no loaded plugin registers is refused before the run starts. A
    component may also shape how the run's judge is asked (``prepare_judge``) and score stored conversations again when
    a run resumes (``resume``).

    :param register: call with each :class:`bench_kernel.RewardComponent` instance; names must be unique.

    Example::

        @bench_kernel.hookimpl
        def register_reward_components(register):
            register(ActionSetComponent(name="ACTION_SET"))
    """


@hookspec
def register_combination_rules(register: Callable[[CombinationRule], None]) -> None:
    """Register rules that combine a task's basis components into its reward.

    Called once per plugin manager. Task files choose one with ``reward_rule`` (a name, or ``{"name": ..., "params":
    {...}}``); tau2's ``product`` is the kernel's default.

    :param register: call with each :class:`bench_kernel.CombinationRule` instance; names must be unique.

    Example::

        @bench_kernel.hookimpl
        def register_combination_rules(register):
            register(WeightedSum(name="weighted-sum"))
    """


@hookspec
def register_task_extensions(register: Callable[[TaskExtension], None]) -> None:
    """Register task fields this plugin owns (kept in ``task.extensions``, not in the kernel's task model).

    Called once per plugin manager, before tasks are loaded. A task file field that no loaded plugin owns is an error
    naming the field (and the installed plugin that owns it).

    :param register: call with each :class:`bench_kernel.TaskExtension`; names must be unique, except that plugins
        sharing a library's field register the same (equal) extension, kept once (bench-atod's ``goals``).

    Example::

        @bench_kernel.hookimpl
        def register_task_extensions(register):
            register(TaskExtension(name="goal_shifts", field="goal_shifts", parent="user_scenario", type=GoalShifts))
    """


@hookspec
def register_task_transforms(register: Callable[[TaskTransform], None]) -> None:
    """Register transforms that change a run's domain data and selected tasks before it plays them.

    Called once per plugin manager. Every run that loads the plugin calls ``domain`` when it loads its tasks and
    ``tasks`` on the ones it selected, with the values of the transform's ``settings`` the run sets (``[run]`` keys of a
    run file, part of the run's identity), then awaits ``prepare`` (which may read the results database); a setting no
    loaded transform owns refuses the run. Once the run has begun, ``header(ctx)`` may add a line to its header; once it
    has played its conversations, ``finished(ctx)`` is called (one that raises is logged).

    :param register: call with each :class:`bench_kernel.TaskTransform`; names must be unique, except that plugins
        sharing a library's transform register the same (equal) one, kept once (bench-changebench's ``goal-shifts``).

    Example::

        @bench_kernel.hookimpl
        def register_task_transforms(register):
            register(PersonaTransform())  # bench-changebench's: `persona`, `persona_file`
    """


@hookspec
def register_report_sections(register: Callable[[ReportSection], None]) -> None:
    """Register sections that ``bench report`` shows after the kernel's figures.

    Called once per plugin manager; ``bench report`` builds its manager from the plugins the run loaded (its stored
    plugin list) that are still installed, so a plugin's sections show only on runs it took part in.
    ``ReportSection.build(view)`` is called once per report: it reads the stored run through a read-only
    :class:`bench_kernel.RunView` (``view.plugin`` is this plugin's name) and returns a :class:`bench_kernel.Section` of
    tables and/or markdown text. A section that raises is shown as one error line naming its plugin; the report goes on.

    :param register: call with each :class:`bench_kernel.ReportSection`; names must be unique.

    Example::

        @bench_kernel.hookimpl
        def register_report_sections(register):
            register(ShiftRecovery(name="gsrt", title="Goal-shift recovery"))
    """


@hookspec
def register_report_formats(register: Callable[[ReportFormat], None]) -> None:
    """Register formats ``bench report --format NAME`` and ``bench run --format NAME`` print a report in.

    Called once per plugin manager; bench-report registers ``table`` (the default), ``json``, ``markdown``, ``csv`` and
    ``html``. A report looks its format up among the run's plugins and those that load with every run
    (``bench.always``): a plugin that only adds formats declares that group too. ``render(report, context)`` returns the
    text to print (only ``context.section`` when one is named); ``charts(report, context)`` the PNGs ``bench report
    --plots DIR`` writes.

    :param register: call with each :class:`bench_kernel.ReportFormat`; names must be unique.

    Example::

        @bench_kernel.hookimpl
        def register_report_formats(register):
            register(LatexFormat(name="latex", description="LaTeX tables"))
    """


@hookspec
def register_report_builders(register: Callable[[ReportBuilder], None]) -> None:
    """Register the builder of a stored run's report (bench-report's): ``bench_kernel.build_report`` calls its ``build``.

    Called once per plugin manager. ``build(store, run_id, registry, by)`` returns the run's
    :class:`bench_kernel.Report` with the registry's sections and cards; the first builder by name is used, and without
    one the kernel prints a short summary in place of a report. A report finds the builder among the run's plugins and
    those that load with every run (``bench.always``), as formats are found.

    :param register: call with each :class:`bench_kernel.ReportBuilder`; names must be unique.

    Example::

        @bench_kernel.hookimpl
        def register_report_builders(register):
            register(StoredReport())
    """


@hookspec
def register_attributors(register: Callable[[Attributor], None]) -> None:
    """Register attributors: who a failed conversation's failure is due to (docs/attribution.md).

    Called once per plugin manager. After every failed conversation is evaluated (a run's, one judged again, an imported
    one), ``attributor.attribute(conversation)`` of each is called in name order until one returns a
    :class:`bench_kernel.Attribution`, which the store keeps with the conversation; one that raises is logged and
    skipped. bench-trust registers the rules.

    :param register: call with each :class:`bench_kernel.Attributor`; names must be unique.

    Example::

        @bench_kernel.hookimpl
        def register_attributors(register):
            register(TimeoutsAreInfrastructure(name="timeouts"))
    """


@hookspec
def register_executors(register: Callable[[Executor], None]) -> None:
    """Register executors: engines that play a run's conversations somewhere (processes, a cluster).

    Called once per plugin manager, in the run's process (and again in each worker that rebuilds the run's context).
    `bench run --executor NAME` picks one (default ``local``, the kernel's own; a loaded executor whose ``replaces``
    names it plays instead: bench-workers'); its ``check(config)`` runs before the run begins, its ``execute(ctx, units,
    on_finished)`` once per run or resume. Whatever plays the conversations, the run's process alone writes the store:
    send every finished conversation and model call back and apply it with :class:`bench_kernel.Writer`.

    :param register: call with each :class:`bench_kernel.Executor` instance; names must be unique.

    Example::

        @bench_kernel.hookimpl
        def register_executors(register):
            register(RayExecutor(name="ray", option_names=("address",)))
    """


@hookspec
def register_profile_readers(register: Callable[[ProfileReader], None]) -> None:
    """Register the reader of profile directories (bench-profiles registers it; docs/profiles.md).

    Called once per process, on the plugin named ``profiles`` only, the first time a profile directory is loaded (`bench
    run --profile DIR`, ``bench_kernel.load_profile(DIR)``); bench's own profile needs no reader. ``read(directory,
    base)`` returns the directory's profile over ``base`` (bench's own), built with :func:`bench_kernel.hashed_profile`,
    or raises ConfigError naming file and JSON path.

    :param register: call with a :class:`bench_kernel.ProfileReader` named like the plugin.

    Example::

        @bench_kernel.hookimpl
        def register_profile_readers(register):
            register(DirectoryReader(name="profiles"))
    """


@hookspec
def register_migrations(register: Callable[[Migrations], None]) -> None:
    """Register SQLite migration sets for tables this plugin stores.

    Called once per plugin manager, before the store opens. Each set is a ``sqlite_utils.Migrations`` named after the
    plugin's distribution; migrations are append-only: never edit or renumber one that has shipped.

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
