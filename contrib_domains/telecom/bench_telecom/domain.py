"""The telecom domain: what `bench` loads when a run names it, and the sync between carrier and phone."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.resources import as_file, files
from pathlib import Path

import attrs
import bench_compose
from bench_compose import Composer, Composition

from bench_kernel import (
    ConfigError,
    Domain,
    DomainData,
    DomainOptions,
    Environment,
    LazyTasks,
    Task,
    data_dir_for,
    get_logger,
    inputs_key,
    read_json,
    read_tasks,
)

from . import faults
from .faults import Subject
from .generator import Generator, own_wording, wording_from_examples
from .phone import PhoneTools
from .records import PaymentRequest, agent_reference_hash, agent_state_from, phone_reference_hash, phone_state_from, read_toml
from .tools import TelecomTools

Catalogue = dict[str, tuple[Composer, Composition, str]]
TAU2_FILES = ("db.toml", "user_db.toml", "main_policy.md", "tech_support_manual.md")
TAU2_SUBJECT = Subject(name="John Smith", phone_number="555-123-2002", overdue_bill_id="B1234321")
OWN_OVERDUE_BILL = "B5900001"


@attrs.define(kw_only=True)
class TelecomDomain(Domain):
    """Mobile-phone support with dual control: the agent works on the carrier's side, the customer on the phone."""

    name: str = "telecom"
    description: str = "Mobile-phone tech support (dual control, tau2-bench's telecom): faults composed into tasks."

    def load(self, options: DomainOptions) -> DomainData:
        """tau2's files when options.data_dir (or $BENCH_TAU2_DATA_DIR) holds them, else our own data."""
        external = _tau2_dir(options)
        if external is not None:
            return _load_tau2(external, options)
        with as_file(files(__package__).joinpath("data")) as packaged:
            return _load_own(Path(packaged), options)


def _tau2_dir(options: DomainOptions) -> Path | None:
    return data_dir_for(options, "telecom", TAU2_FILES)


def _load_tau2(data_dir: Path, options: DomainOptions) -> DomainData:
    examples = data_dir / "tasks_small.json"
    if examples.is_file():
        wording = wording_from_examples(read_json(examples), str(examples))
    else:
        get_logger().warning("telecom: no tasks_small.json in the data directory; tasks use our own wording", data_dir=str(data_dir))
        wording = own_wording(_packaged("wording.toml"))
    base = _data(data_dir, policy_files=("main_policy.md", "tech_support_manual.md", "main_policy_solo.md"), phone=PhoneTools, source=str(data_dir))
    generator = Generator(subject=_tau2_subject(base), wording=wording)
    splits_path = data_dir / "split_tasks.json"
    splits = read_json(splits_path) if splits_path.is_file() else {}
    catalogue = generator.by_id()
    splits = {**splits, "composed": list(catalogue)}
    # tau2's task set (its tasks.json) is its split "full"; without a split file, every composition.
    name = options.split or ("full" if "full" in splits else "composed")
    inputs = [data_dir / n for n in ("db.toml", "user_db.toml", "tasks_small.json", "split_tasks.json")]
    return _with_tasks(base, catalogue, splits, name, splits_path, options, inputs if examples.is_file() else [*inputs, _packaged("wording.toml")])


def _load_own(data_dir: Path, options: DomainOptions) -> DomainData:
    base = _data(
        data_dir,
        policy_files=("main_policy.md", "tech_support_manual.md", "main_policy_solo.md", "tech_support_manual_solo.md"),
        phone=None,
        source=str(data_dir),
    )
    generator = Generator(subject=_own_subject(base), wording=own_wording(data_dir / "wording.toml"))
    inputs = [data_dir / n for n in ("db.toml", "user_db.toml", "wording.toml")]
    catalogue = generator.by_id()
    splits = generator.own_splits(list(catalogue))
    return _with_tasks(base, catalogue, splits, options.split or "default", data_dir / "wording.toml", options, inputs)


def _data(data_dir: Path, *, policy_files: tuple[str, ...], phone: type[PhoneTools] | None, source: str) -> DomainData:
    """The domain without its tasks: states, toolkits, policies, sync and tau2's hashes."""
    phone_state = phone_state_from(read_toml(data_dir / "user_db.toml"), str(data_dir / "user_db.toml"))
    if phone is None:
        # A reboot restores the phone's own factory settings: those it was shipped with.
        factory = phone_state["phone"]["device"].active_apn_settings
        phone = type("PhoneTools", (PhoneTools,), {"factory_apn": factory, "__doc__": PhoneTools.__doc__})
    texts = [(data_dir / name).read_text(encoding="utf-8") for name in policy_files]
    solo_manual = texts[3] if len(texts) > 3 else texts[1]
    return DomainData(
        name="telecom",
        tasks=[],
        policy=_policy(texts[0], texts[1]),
        solo_policy=_policy(texts[2], solo_manual),
        agent_toolkit=TelecomTools,
        agent_state=agent_state_from(read_toml(data_dir / "db.toml"), str(data_dir / "db.toml")),
        user_toolkit=phone,
        user_state=phone_state,
        sync=sync_phone,
        sync_gold_actions=False,
        reference_hash=agent_reference_hash,
        reference_user_hash=phone_reference_hash,
        source=source,
        tool_results="tau2",
        failed_gold_actions_scored=True,
    )  # tau2's tool message texts and gold-failure semantics


def _policy(main: str, manual: str) -> str:
    """The agent's policy: the main policy and the tech-support manual, each in its own tag (as tau2 joins them)."""
    return f"<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n{manual}\n</tech_support_policy>"


def _with_tasks(
    base: DomainData, catalogue: Catalogue, splits: dict[str, list[str]], name: str, source: Path, options: DomainOptions, inputs: list[Path]
) -> DomainData:
    """The domain with the split's tasks, each composed when a run (or a listing) first uses it."""
    if options.tasks_file is not None:
        return attrs.evolve(base, tasks=read_tasks(options.tasks_file, options))
    if name not in splits:
        raise ConfigError(f"unknown split {name!r} for telecom ({source}); known: {', '.join(sorted(splits))}")
    wanted = set(splits[name])
    unknown = sorted(wanted - set(catalogue))
    if unknown:
        raise ConfigError(f"split {name!r} of {source} names {len(unknown)} task ids the telecom generator does not compose, e.g. {unknown[0]!r}")
    # The tasks' hash is kept on disk by what decides them: these files, this code (telecom's and bench-compose's), the split.
    key = inputs_key([*inputs, *_code_files()], name)
    ids = [i for i in catalogue if i in wanted]  # catalogue order, as the generator builds them

    def build(chosen: Sequence[str]) -> list[Task]:
        return [composer.build(base, composition, persona) for composer, composition, persona in (catalogue[i] for i in chosen)]

    return attrs.evolve(base, tasks=LazyTasks(ids, build, inputs_key=key))


def _code_files() -> list[Path]:
    """The source files of the code that composes telecom's tasks."""
    return sorted(path for module in (faults, bench_compose) for path in Path(module.__file__ or "").parent.glob("*.py"))


def _tau2_subject(data: DomainData) -> Subject:
    """tau2's generator's customer (John Smith, 555-123-2002) when the database has that line, else ours."""
    if any(line.phone_number == TAU2_SUBJECT.phone_number for line in data.agent_state["lines"].values()):
        return TAU2_SUBJECT
    return _own_subject(data)


def _own_subject(data: DomainData) -> Subject:
    """Our tasks' customer: the second line of the first customer."""
    customer = next(iter(data.agent_state["customers"].values()))
    if len(customer.line_ids) < 2:
        raise ConfigError(f"{data.source}: the first customer needs a second line, the one our tasks are about")
    line = data.agent_state["lines"][customer.line_ids[1]]
    return Subject(name=customer.full_name, phone_number=line.phone_number, overdue_bill_id=OWN_OVERDUE_BILL)


def _packaged(name: str) -> Path:
    with as_file(files(__package__).joinpath("data", name)) as path:
        return Path(path)


def sync_phone(env: Environment) -> None:
    """Carry the carrier's side over to the phone, as tau2's sync_tools does after every successful call.

    The phone learns whether its line is active, may roam and has data left; a paid payment
    request marks its bill paid; a bill awaiting payment becomes the phone's payment request.
    """
    phone, carrier = env.user_tools, env.agent_tools
    if not isinstance(phone, PhoneTools) or not isinstance(carrier, TelecomTools):
        return
    number = phone.surroundings.phone_number
    if number is None:
        return
    line = carrier.line_by_phone(number)
    plan = carrier.plan_of(line)
    phone.set_line_facts(
        line_active=line.status == "Active",
        roaming_allowed=bool(line.roaming_enabled),
        usage_exceeded=line.data_used_gb >= plan.data_limit_gb + line.data_refueling_gb,
    )
    request = phone.surroundings.payment_request
    if request is not None and request.paid:
        carrier.mark_paid(request.bill_id)
        phone.set_payment_request(None)
    if phone.surroundings.payment_request is None:
        waiting = carrier.bills_awaiting_payment(carrier.get_customer_by_phone(number))
        if waiting:
            phone.set_payment_request(PaymentRequest(bill_id=waiting[0].bill_id, amount_due=waiting[0].total_due))
