"""`bench tau2 profile`: the dump run inside a tau2 Python, and the profile directory written from it.

The always-run tests use a tiny made-up `tau2` package written into the test's tmp dir (our own classes with the
constructor and attribute shapes the dump uses, and our own texts), run by the current interpreter. With
BENCH_TAU2_PYTHON naming a real tau2 install's Python, the real dump is compared with the recordings of what tau2
sent (../shared/reference/tau2/requests).
"""

from __future__ import annotations

import ast
import json
import os
import random
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest
from bench_tau2 import make_tau2_profile, profile_tau2
from bench_tau2.tau2_profile import DUMP_SCRIPT, toml_value
from click.testing import CliRunner

from bench_kernel import ConfigError, load_profile

SHARED = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[3] / ".." / "shared" / "reference")
PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")

FAKE_TAU2 = {
    "tau2/__init__.py": '__version__ = "0.0.fake"\n',
    "tau2/config.py": """
        DEFAULT_SEED = 7
        DEFAULT_LLM_ARGS_AGENT = {"temperature": 0.5, "top_p": 0.9}
        DEFAULT_LLM_ARGS_USER = {"temperature": 0.25, "seed": 3}
        DEFAULT_LLM_NL_ASSERTIONS_ARGS = {"temperature": 0.0}
    """,
    "tau2/utils/__init__.py": """
        import os
        from pathlib import Path
        DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/nonexistent"))
    """,
    "tau2/data_model/__init__.py": "",
    "tau2/data_model/tasks.py": """
        from types import SimpleNamespace

        class Action:
            def __init__(self, name, arguments, requestor):
                self.name, self.arguments, self.requestor = name, arguments, requestor

            @classmethod
            def model_validate(cls, data):
                return cls(data["name"], data["arguments"], data["requestor"])

            def get_func_format(self):
                return self.name + "(" + ", ".join(f"{k}={v}" for k, v in self.arguments.items()) + ")"

        class Task:
            @classmethod
            def model_validate(cls, data):
                task = cls()
                task.ticket = data.get("ticket")
                actions = [Action.model_validate(a) for a in data["evaluation_criteria"]["actions"]]
                task.evaluation_criteria = SimpleNamespace(actions=actions)
                return task
    """,
    "tau2/data_model/message.py": """
        class _Message:
            def __init__(self, **fields):
                self.__dict__.update(fields)

        class SystemMessage(_Message): pass
        class UserMessage(_Message): pass
        class AssistantMessage(_Message): pass
        class ToolMessage(_Message): pass
        class ToolCall(_Message): pass
    """,
    "tau2/utils/llm_utils.py": """
        import json
        import urllib.request

        def _spell(m):
            # this fake client's own wire spelling: tool calls as (type, id, function), results as (tool_call_id,
            # role, content), arguments with non-ASCII kept, a null content sent
            if getattr(m, "tool_calls", None):
                calls = [{"type": "function", "id": c.id, "function": {"name": c.name,
                          "arguments": json.dumps(c.arguments, ensure_ascii=False)}} for c in m.tool_calls]
                return {"role": m.role, "content": m.content, "tool_calls": calls}
            if m.role == "tool":
                return {"tool_call_id": m.id, "role": "tool", "content": m.content}
            return {"role": m.role, "content": m.content}

        def generate(model, messages, tools=None, api_base=None, api_key=None, **kwargs):
            body = {"model": model, "messages": [_spell(m) for m in messages], "temperature": 0.0,
                    "tool_choice": "auto", "tools": [t.openai_schema for t in tools or []]}
            request = urllib.request.Request(api_base + "/chat/completions", data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request) as reply:
                return json.loads(reply.read())
    """,
    "tau2/environment/__init__.py": "",
    "tau2/environment/tool.py": """
        class Tool:
            def __init__(self, name, description, properties):
                self.name = name
                self.openai_schema = {"type": "function", "function": {
                    "name": name, "description": description,
                    "parameters": {"type": "object", "properties": properties, "title": "parameters"}}}
    """,
    "tau2/agent/__init__.py": "",
    "tau2/agent/llm_agent.py": """
        import os
        from tau2.environment.tool import Tool

        BREAK = os.environ.get("FAKE_TAU2_BREAK", "")

        class LLMAgent:
            def __init__(self, tools, domain_policy, llm, llm_args=None):
                self.tools, self.domain_policy = tools, domain_policy

            @property
            def system_prompt(self):
                policy = self.domain_policy.strip() if BREAK == "strip" else self.domain_policy
                size = f" ({len(policy)} characters)" if BREAK == "length" else ""
                return "You help the shop's customers.\\n[rules" + size + "]\\n" + policy + "\\n[end]"

        class LLMGTAgent(LLMAgent):
            def __init__(self, tools, domain_policy, task, llm, llm_args=None):
                super().__init__(tools, domain_policy, llm, llm_args)
                self.task = task

            def make_agent_instructions_from_actions(self):
                return " ; ".join(
                    f"({i + 1}) " + ("do " if a.requestor == "assistant" else "ask the user to do ")
                    + a.get_func_format() + " #" + ("abc"[i] if BREAK == "plan" else str(i + 1))
                    for i, a in enumerate(self.task.evaluation_criteria.actions))

            @property
            def system_prompt(self):
                return "Follow the steps.\\n" + self.domain_policy + "\\nSteps: " + self.make_agent_instructions_from_actions()

        class LLMSoloAgent(LLMAgent):
            STOP_FUNCTION_NAME = "finish"
            STOP_TOKEN = "<<over>>"

            def __init__(self, tools, domain_policy, task, llm, llm_args=None):
                super().__init__(tools, domain_policy, llm, llm_args)
                self.task = task
                self.tools.append(Tool("finish", "Say you are finished.", {}))

            @property
            def system_prompt(self):
                return (f"Work alone; call `{self.STOP_FUNCTION_NAME}` at the end.\\n" + self.domain_policy
                        + "\\nTicket:" + self.task.ticket)
    """,
    "tau2/user/__init__.py": "",
    "tau2/user/user_simulator.py": """
        from tau2.utils import DATA_DIR

        STOP, TRANSFER, OUT_OF_SCOPE = "<<bye>>", "<<human>>", "<<lost>>"

        class UserSimulator:
            def __init__(self, llm, instructions=None, tools=None, llm_args=None):
                self.instructions, self.tools = instructions, tools

            @property
            def system_prompt(self):
                name = "with_tools.md" if self.tools is not None else "plain.md"
                guidelines = (DATA_DIR / "tau2" / "user_simulator" / name).read_text()
                return guidelines + "\\n<case>\\n" + self.instructions + "\\n</case>"
    """,
    "tau2/orchestrator/__init__.py": "",
    "tau2/orchestrator/orchestrator.py": """
        import os
        from types import SimpleNamespace
        DEFAULT_FIRST_AGENT_MESSAGE = SimpleNamespace(role="assistant", content="Hello there, what do you need?")

        class Orchestrator:
            def __init__(self, domain, agent, user, environment, task, max_steps=100):
                self.environment = environment

            def initialize(self):
                self.environment.set_state(initialization_data=None, initialization_actions=None, message_history=[])
                # FAKE_TAU2_SILENT_GREETING: as AgentChangeBench, the greeting goes to the user only
                greeting = [] if os.environ.get("FAKE_TAU2_SILENT_GREETING") else [DEFAULT_FIRST_AGENT_MESSAGE]
                self.agent_state = SimpleNamespace(messages=greeting)
                self.environment.sync_tools()
    """,
    "tau2/registry.py": """
        from types import SimpleNamespace
        from tau2.environment.tool import Tool

        def shop():
            tools = [Tool("look_up", "Look an order up.", {"order": {"type": "string"}, "a_field": {"type": "integer"}}),
                     Tool("refund", "Refund an order.", {"order": {"type": "string"}})]
            return SimpleNamespace(get_tools=lambda: tools, get_user_tools=no_user_tools)

        def phone():
            return SimpleNamespace(get_tools=lambda: [Tool("reset_line", "Reset a line.", {})],
                                   get_user_tools=lambda: [Tool("reboot", "Reboot the phone.", {})])

        def broken():
            raise RuntimeError("no database here")

        def no_user_tools():
            raise ValueError("User tools not available")

        DOMAINS = {"shop": shop, "phone": phone, "broken": broken}

        class Registry:
            def get_domains(self):
                return list(DOMAINS)

            def get_env_constructor(self, name):
                if name not in DOMAINS:
                    raise KeyError(f"Domain {name} not found in registry")
                return DOMAINS[name]

        registry = Registry()
    """,
}
GUIDELINES = {"plain.md": "Act as a customer.\n", "with_tools.md": "Act as a customer; you have a phone.\n"}


@pytest.fixture
def fake_tau2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A made-up tau2 on PYTHONPATH and its data directory; returns the data directory."""
    root = tmp_path / "fake"
    for name, text in FAKE_TAU2.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    data = tmp_path / "data"
    (data / "tau2" / "user_simulator").mkdir(parents=True)
    for name, text in GUIDELINES.items():
        (data / "tau2" / "user_simulator" / name).write_text(text, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(root))
    monkeypatch.delenv("FAKE_TAU2_BREAK", raising=False)
    monkeypatch.delenv("FAKE_TAU2_SILENT_GREETING", raising=False)
    return data


def run_dump(data: Path, *args: str) -> dict[str, Any]:
    """The dump's JSON document, run with this interpreter over the fake tau2."""
    done = subprocess.run(
        [sys.executable, str(DUMP_SCRIPT), *args], capture_output=True, text=True, check=True, env={**os.environ, "TAU2_DATA_DIR": str(data)}
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_dump_document(fake_tau2: Path) -> None:
    document = run_dump(fake_tau2)
    assert document["texts"] == {
        "agent": "You help the shop's customers.\n[rules]\n{{policy}}\n[end]",
        "agent_solo": "Work alone; call `{{done_tool}}` at the end.\n{{policy}}\nTicket:{{ticket}}",
        "plan_step_agent": "({{n}}) do {{call}} #{{n}}",
        "plan_step_user": "({{n}}) ask the user to do {{call}} #{{n}}",
        "plan_separator": " ; ",
        "agent_plan": "Follow the steps.\n{{policy}}\nSteps: {{plan}}",
        "user": "Act as a customer.\n\n<case>\n{{scenario}}\n</case>",
        "user_tools": "Act as a customer; you have a phone.\n\n<case>\n{{scenario}}\n</case>",
    }
    assert list(document["tools"]) == ["shop", "phone"]
    shop = document["tools"]["shop"]
    assert [s["function"]["name"] for s in shop["agent"]] == ["look_up", "refund"]
    assert list(shop["agent"][0]["function"]["parameters"]["properties"]) == ["order", "a_field"]  # order kept
    assert shop["user"] is None
    assert [s["function"]["name"] for s in document["tools"]["phone"]["user"]] == ["reboot"]
    assert document["failed_domains"] == {"broken": "RuntimeError: no database here"}
    assert document["done_tool"]["function"]["name"] == "finish"
    assert document["sampling"] == {"agent": {"temperature": 0.5, "top_p": 0.9}, "user": {"temperature": 0.25}, "judge": {"temperature": 0.0}}
    assert document["seed"] == {"policy": "trial"}
    assert document["source"]["default_seed"] == 7
    assert document["messages"] == {
        "tool_call_fields": ["type", "id", "function"],
        "tool_message_fields": ["tool_call_id", "role", "content"],
        "ascii_arguments": False,
        "null_content": True,
    }  # as the fake client spelt its probe
    assert document["conversation"] == {
        "greeting": "Hello there, what do you need?",
        "greeting_in_agent_history": True,
        "user_stop_tokens": ["<<bye>>", "<<human>>", "<<lost>>"],
        "solo_stop_token": "<<over>>",
    }
    assert document["source"]["version"] == "0.0.fake"


def test_a_fork_that_keeps_the_greeting_from_the_agent(fake_tau2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As AgentChangeBench's orchestrator: the user hears the greeting, the agent's own history starts empty."""
    monkeypatch.setenv("FAKE_TAU2_SILENT_GREETING", "1")
    assert run_dump(fake_tau2)["conversation"]["greeting_in_agent_history"] is False
    make_tau2_profile(sys.executable, tmp_path / "p", data_dir=str(fake_tau2))
    assert "greeting_in_agent_history = false" in (tmp_path / "p" / "profile.toml").read_text(encoding="utf-8")
    assert load_profile(tmp_path / "p").greeting_in_agent_history is False


def test_dump_selected_domain(fake_tau2: Path) -> None:
    document = run_dump(fake_tau2, "--domain", "phone", "--domain", "nowhere")
    assert list(document["tools"]) == ["phone"]
    assert "nowhere" in document["failed_domains"]["nowhere"]


def test_written_directory(fake_tau2: Path, tmp_path: Path) -> None:
    out = tmp_path / "profile"
    written = make_tau2_profile(sys.executable, out, data_dir=str(fake_tau2))
    assert written.tools == {"shop": (2, None), "phone": (1, 1)}
    assert written.skipped == {"broken": "RuntimeError: no database here"}
    settings = tomllib.loads((out / "profile.toml").read_text(encoding="utf-8"))
    assert settings["format"] == 1 and settings["name"] == "tau2"
    assert settings["source"]["version"] == "0.0.fake" and settings["source"]["python"] == sys.executable
    assert settings["source"]["skipped_domains"] == ["broken"]
    assert settings["sampling"]["user"] == {"temperature": 0.25}
    assert settings["seed"] == {"policy": "trial"}
    assert settings["messages"]["tool_call_fields"] == ["type", "id", "function"]
    assert load_profile(out).messages.tool_message_fields == ("tool_call_id", "role", "content")  # bench reads it back
    assert settings["conversation"]["user_stop_tokens"] == ["<<bye>>", "<<human>>", "<<lost>>"]
    assert sorted(p.name for p in (out / "texts").iterdir()) == sorted(
        f"{k}.md" for k in ("agent", "agent_solo", "agent_plan", "plan_step_agent", "plan_step_user", "plan_separator", "user", "user_tools")
    )
    assert (out / "texts" / "plan_separator.md").read_bytes() == b" ; "  # byte for byte, no newline added
    shop = json.loads((out / "tools" / "shop.json").read_text(encoding="utf-8"))
    assert shop["user"] is None and list(shop["agent"][0]["function"]) == ["name", "description", "parameters"]
    assert json.loads((out / "tools" / "done.json").read_text(encoding="utf-8"))["function"]["name"] == "finish"
    assert not (out / "tools" / "broken.json").exists()


def test_command_line(fake_tau2: Path, tmp_path: Path) -> None:
    out = tmp_path / "p"
    result = CliRunner().invoke(profile_tau2, ["--tau2-python", sys.executable, "--data-dir", str(fake_tau2), "-o", str(out), "--name", "fake.1"])
    assert result.exit_code == 0, result.output
    assert "wrote profile 'fake.1' (tau2 0.0.fake)" in result.output
    assert "shop (2 agent tools, no user tools), phone (1 agent tools, 1 user tools)" in result.output
    assert "skipped domain 'broken': RuntimeError: no database here" in result.output
    assert tomllib.loads((out / "profile.toml").read_text(encoding="utf-8"))["name"] == "fake.1"


def test_force(fake_tau2: Path, tmp_path: Path) -> None:
    out = tmp_path / "p"
    (out / "tools").mkdir(parents=True)
    (out / "tools" / "stale.json").write_text("{}", encoding="utf-8")
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ConfigError, match="not empty"):
        make_tau2_profile(sys.executable, out, data_dir=str(fake_tau2))
    make_tau2_profile(sys.executable, out, data_dir=str(fake_tau2), force=True)
    assert not (out / "tools" / "stale.json").exists()  # a stale domain would otherwise be loaded with the profile
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        ("strip", "text 'agent': a sentinel value appears transformed"),
        ("length", "self-check failed for text 'agent'"),
        ("plan", "plan steps differ by more than their number"),
    ],
)
def test_self_check(fake_tau2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, breakage: str, message: str) -> None:
    monkeypatch.setenv("FAKE_TAU2_BREAK", breakage)
    with pytest.raises(ConfigError, match=re.escape(message)) as caught:
        make_tau2_profile(sys.executable, tmp_path / "p", data_dir=str(fake_tau2))
    assert str(caught.value).startswith(f"{sys.executable}: the tau2 dump failed (exit 3): ")
    assert not (tmp_path / "p").exists()


def test_python_without_tau2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONPATH", raising=False)
    with pytest.raises(ConfigError) as caught:
        make_tau2_profile(sys.executable, tmp_path / "p")
    assert str(caught.value) == (f"{sys.executable}: the tau2 dump failed (exit 3): import tau2 failed: ModuleNotFoundError: No module named 'tau2'")


def test_no_such_python(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such Python"):
        make_tau2_profile(str(tmp_path / "nowhere" / "python"), tmp_path / "p")


def test_guidelines_missing(fake_tau2: Path, tmp_path: Path) -> None:
    (tmp_path / "empty" / "tau2").mkdir(parents=True)
    with pytest.raises(ConfigError, match=r"could not read its guidelines .* point --data-dir at tau2's data"):
        make_tau2_profile(sys.executable, tmp_path / "p", data_dir=str(tmp_path / "empty"))


def test_data_dir_without_tau2_folder(fake_tau2: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--data-dir .*: no tau2/ folder in it"):
        make_tau2_profile(sys.executable, tmp_path / "p", data_dir=str(fake_tau2 / "tau2"))  # one level too deep


def pip_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_tau2: Path, url: str | None) -> Path:
    """The fake tau2 as pip installs it: in a site directory with its dist-info, no data beside it; the checkout's path."""
    site = tmp_path / "env" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (tmp_path / "fake" / "tau2").rename(site / "tau2")
    info = site / "tau2-0.0.fake.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tau2\nVersion: 0.0.fake\n", encoding="utf-8")
    if url is not None:
        (info / "direct_url.json").write_text(json.dumps({"dir_info": {}, "url": url}), encoding="utf-8")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    fake_tau2.rename(checkout / "data")
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.delenv("TAU2_DATA_DIR", raising=False)
    return checkout


def test_pip_install_finds_the_checkout_it_came_from(fake_tau2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tau2 looks for its data only via TAU2_DATA_DIR or beside its source: pip's install record names the checkout."""
    checkout = pip_installed(tmp_path, monkeypatch, fake_tau2, url=(tmp_path / "checkout").as_uri())
    result = CliRunner().invoke(profile_tau2, ["--tau2-python", sys.executable, "-o", str(tmp_path / "p")])
    assert result.exit_code == 0, result.output
    assert f"tau2's data read from {checkout / 'data'}" in result.output
    assert (tmp_path / "p" / "texts" / "user.md").read_text(encoding="utf-8").startswith("Act as a customer.\n")


@pytest.mark.parametrize("url", [None, "https://github.com/example/tau2-bench.git"])
def test_pip_install_without_data_names_the_variable(fake_tau2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str | None) -> None:
    pip_installed(tmp_path, monkeypatch, fake_tau2, url=url)
    with pytest.raises(ConfigError) as caught:
        make_tau2_profile(sys.executable, tmp_path / "p")
    beside = tmp_path / "env" / "lib" / "data"
    assert str(caught.value) == (
        f"{sys.executable}: the tau2 dump failed (exit 3): tau2's data directory was not found: tau2 reads it from "
        f"TAU2_DATA_DIR, else from {beside}, which does not exist (a pip install of tau2 does not copy its data); pass "
        "--data-dir DIR or set TAU2_DATA_DIR=DIR, DIR being the data/ folder of a tau2-bench checkout"
    )


def test_data_variable_passed_through(fake_tau2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = pip_installed(tmp_path, monkeypatch, fake_tau2, url=None)
    monkeypatch.setenv("TAU2_DATA_DIR", str(checkout / "data"))
    assert make_tau2_profile(sys.executable, tmp_path / "p").data_dir == str(checkout / "data")
    monkeypatch.setenv("TAU2_DATA_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match=re.escape(f"TAU2_DATA_DIR={tmp_path} holds no tau2/ folder")):
        make_tau2_profile(sys.executable, tmp_path / "q")


def test_named_domain_that_fails(fake_tau2: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="domain\\(s\\) did not build: broken: RuntimeError: no database here"):
        make_tau2_profile(sys.executable, tmp_path / "p", data_dir=str(fake_tau2), domains=["shop", "broken"])


def test_bad_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--name"):
        make_tau2_profile(sys.executable, tmp_path / "p", name="tau 2")


def test_clean_error_line(tmp_path: Path) -> None:
    """Through the installed `bench`: one line on stderr, no traceback."""
    bench = Path(sys.executable).with_name("bench")
    if not bench.exists():
        pytest.skip(f"no bench executable beside {sys.executable}")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BENCH_DEBUG")}
    done = subprocess.run(
        [str(bench), "tau2", "profile", "--tau2-python", sys.executable, "-o", str(tmp_path / "p")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        f"Error: {sys.executable}: the tau2 dump failed (exit 3): import tau2 failed: ModuleNotFoundError: No module named 'tau2'"
    ]


def test_dump_script_is_python_310() -> None:
    """The dump runs in the user's tau2 Python: its syntax must be 3.10's, its imports the standard library's and tau2's."""
    source = DUMP_SCRIPT.read_text(encoding="utf-8")
    tree = ast.parse(source, feature_version=(3, 10))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert imported - {"tau2", "__future__"} <= set(sys.stdlib_module_names)


@pytest.mark.parametrize("value", ["plain", 'quote " and \\ backslash', "tab\tnew\nline\x7f\x01 é ☃ 😀", ""])
def test_toml_strings(value: str) -> None:
    assert tomllib.loads(f"v = {toml_value(value)}")["v"] == value


def test_toml_values() -> None:
    value = {"a": [1, 2.5, True], "b c": {"d": "e"}, "gone": None}
    assert tomllib.loads(f"v = {toml_value(value)}")["v"] == {"a": [1, 2.5, True], "b c": {"d": "e"}}


# --- the real tau2, compared with the recordings of what it sent -------------------------------------------------


def render(template: str, **values: str) -> str:
    """bench's single-pass placeholder replacement."""
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


@pytest.fixture(scope="module")
def real_profile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """The profile of the tau2 install BENCH_TAU2_PYTHON names, its Python and the data directory used."""
    python = os.environ.get("BENCH_TAU2_PYTHON")
    if not python:
        pytest.skip("set BENCH_TAU2_PYTHON to a Python where `import tau2` works to compare with tau2's recordings")
    reference = SHARED / "tau2"
    if not (reference / "requests").is_dir():
        pytest.skip(f"reference data absent: {reference / 'requests'}")
    data = tmp_path_factory.mktemp("tau2data")
    (data / "tau2" / "domains").mkdir(parents=True)
    for domain in ("airline", "retail"):
        (data / "tau2" / "domains" / domain).symlink_to(reference / domain)
    (data / "tau2" / "user_simulator").symlink_to(reference / "user_simulator")
    out = tmp_path_factory.mktemp("profile") / "tau2"
    make_tau2_profile(python, out, data_dir=str(data), domains=["airline", "retail"])
    return out, python, data


def recorded(domain: str) -> list[dict[str, Any]]:
    """The request bodies tau2 sent for the domain's task 0, in order."""
    path = SHARED / "tau2" / "requests" / f"{domain}-task-0.jsonl"
    return [json.loads(line)["body"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def tau2_scenario(python: str, data: Path, domain: str) -> str:
    """str(task.user_scenario) of the domain's task 0, as tau2 builds the user simulator's instructions."""
    code = (
        f"from tau2.registry import registry\n"
        f"task = next(t for t in registry.get_tasks_loader({domain!r})() if t.id == '0')\n"
        f"import sys; sys.stdout.write(str(task.user_scenario))"
    )
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, "TAU2_DATA_DIR": str(data)})
    return done.stdout


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_real_tau2_matches_recordings(real_profile: tuple[Path, str, Path], domain: str) -> None:
    out, python, data = real_profile
    bodies = recorded(domain)
    agent = [b for b in bodies if "tools" in b]
    user = [b for b in bodies if "tools" not in b]
    tools = json.loads((out / "tools" / f"{domain}.json").read_text(encoding="utf-8"))["agent"]
    for body in agent:
        assert body["tools"] == tools
        assert json.dumps(body["tools"]) == json.dumps(tools)  # key order too
    policy = (SHARED / "tau2" / domain / "policy.md").read_bytes().decode("utf-8")
    texts = {p.stem: p.read_bytes().decode("utf-8") for p in (out / "texts").glob("*.md")}
    assert agent[0]["messages"][0]["content"] == render(texts["agent"], policy=policy)
    assert user[0]["messages"][0]["content"] == render(texts["user"], scenario=tau2_scenario(python, data, domain))
    settings = tomllib.loads((out / "profile.toml").read_text(encoding="utf-8"))
    assert user[0]["messages"][1]["content"] == settings["conversation"]["greeting"]
    assert settings["seed"]["policy"] == "trial"
    trial_seed = random.Random(settings["source"]["default_seed"]).randint(0, 1_000_000)
    assert {b["seed"] for b in bodies} == {trial_seed}
    tool_messages = [m for b in agent for m in b["messages"] if m["role"] == "tool"]
    callers = [m for b in agent for m in b["messages"] if m.get("tool_calls")]
    assert {tuple(m) for m in tool_messages} == {tuple(settings["messages"]["tool_message_fields"])}
    assert {tuple(c) for m in callers for c in m["tool_calls"]} == {tuple(settings["messages"]["tool_call_fields"])}
    assert all(("content" in m) == settings["messages"]["null_content"] for m in callers)
    assert {b["temperature"] for b in agent} == {settings["sampling"]["agent"]["temperature"]}
    assert {b["temperature"] for b in user} == {settings["sampling"]["user"]["temperature"]}


# --- banking_knowledge: one tool order for every retrieval variant -------------------------------------------------


def dump_module() -> Any:
    """tau2_dump.py imported as a module (it is stdlib-only and imports nothing of tau2 at import time)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tau2_dump_under_test", DUMP_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_variant_orders_merge_into_one_that_keeps_each() -> None:
    dump = dump_module()
    base = ["transfer", "get_time", "log"]
    orders = [base, ["KB_search", *base], ["KB_search", "grep", *base], ["bm25", "dense", "shell", *base], ["shell", *base]]
    merged = dump.merged_order(orders)
    for order in orders:
        assert [name for name in merged if name in order] == order
    assert merged[-3:] == base


def test_variant_orders_that_contradict_each_other_are_refused() -> None:
    dump = dump_module()
    with pytest.raises(dump.DumpError, match="inconsistently"):
        dump.merged_order([["a", "b"], ["b", "a"]])
