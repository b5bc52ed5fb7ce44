"""The viewer's pages over real HTTP against a `bench view` process: runs, conversations, queries, facets, comparison."""

from __future__ import annotations

import hashlib
import html
import re
import socket
from pathlib import Path
from urllib.parse import unquote

import httpx
import pytest
from bench_view.queries import QUERIES
from click.testing import CliRunner
from viewdb import FAILING, SHIFTED_RUN

from bench_kernel.testing import bench_cli


def get(url: str, status: int = 200) -> str:
    response = httpx.get(url, timeout=30)
    assert response.status_code == status, (url, response.status_code, response.text[:500])
    return html.unescape(response.text)


def links(page: str) -> list[str]:
    """The page's links as sent (to follow them)."""
    return [html.unescape(h) for h in re.findall(r'href="([^"]+)"', page)]


def decoded(page: str) -> list[str]:
    """The page's links percent-decoded (to read them)."""
    return [unquote(link) for link in links(page)]


def test_index_lists_every_run(viewer: str) -> None:
    page = get(f"{viewer}/-/bench")
    for run_id in (SHIFTED_RUN, "plain", "idle", "llm"):
        assert f"/-/bench/run?id={run_id}" in decoded(page)


def test_run_page_figures_link_to_their_conversations(viewer: str) -> None:
    page = get(f"{viewer}/-/bench/run?id=plain")
    assert "24 agent conversations scored (12 tasks x 2 trials)" in page
    assert re.search(r"pass\^2</a></td><td class=\"num\">1.000", page)
    average = next(link for link in links(page) if unquote(link).endswith("conversations_of_run?run=plain&arm=agent&termination_reason=&task_id="))
    behind = get(viewer + average)
    assert "24 rows" in behind and len(set(re.findall(r'href="/-/bench/conversation\?id=plain%2Fagent%2F[^"]+"', behind))) == 24
    terminations = next(link for link in links(page) if "termination_reason=user_stop" in link)
    assert "24 rows" in get(viewer + terminations)
    component = next(link for link in links(page) if "metric=component.DB" in link)
    assert "24 rows" in get(viewer + component)
    assert page.count('class="conversation-link passed"') == 24


def test_run_page_shows_costs_and_plugin_sections(viewer: str) -> None:
    llm = get(f"{viewer}/-/bench/run?id=llm")
    assert "fake-model" in llm and re.search(r"<td class=\"num\">0.0001</td>", llm)
    assert llm.count('class="conversation-link failed"') == 2
    shifts = get(f"{viewer}/-/bench/run?id={SHIFTED_RUN}")
    assert "gsrt (run-level)" in shifts and "recovery_rate" in shifts


def test_conversation_page_has_everything_about_a_failing_conversation(viewer: str) -> None:
    page = get(f"{viewer}/-/bench/conversation?id={FAILING}")
    assert '<span class="badge failed" id="verdict">failed</span>' in page
    # Transcript: indices, turns, timestamps.
    assert re.search(r"#1 · turn 1 · user\s+· 20\d\d-\d\d-\d\dT", page)
    # The tool call with its arguments and the error it got, highlighted.
    call = re.search(r'<div class="toolcall error" data-tool="find_customer_by_email">(.*?)</div>\s*</div>', page, re.S)
    assert call and '"mail": "nobody@example.net"' in call.group(1) and "unexpected keyword argument 'mail'" in call.group(1)
    assert '<div class="message tool error" id="message-3">' in page
    # Events in place: the channel transcript before message 1, the goal status before message 4.
    assert page.index('data-kind="channel.transcript"') < page.index('id="message-1"')
    assert re.search(r'class="meant">Which plan is the fastest\?</td>.*class="heard">Which plan is the fattest\?', page, re.S)
    assert page.index('id="message-3"') < page.index('data-kind="goal.status"') < page.index('id="message-4"')
    assert "status:</span> failed" in page
    # Reward components with their checks, metrics, model calls with tokens and cost.
    assert '<tr class="failed"><td>Fiber 1000</td><td>no</td><td class="detail">not communicated</td></tr>' in page
    assert "component.COMMUNICATE" in page
    assert '<td class="num" id="prompt-tokens">20</td>' in page
    assert re.search(r'id="total-cost">0\.0000\d\d<', page)


def test_an_agent_that_called_its_models_itself(viewer: str, results_db: Path) -> None:
    from bench_kernel import Store

    store = Store(results_db)
    try:
        cid = store.db.execute("select id from conversations where run_id = 'idle' and agent_cost is null").fetchone()[0]
    finally:
        store.close()
    conversation = get(f"{viewer}/-/bench/conversation?id={cid.replace('/', '%2F')}")
    assert "<th>cost</th><td>agent unknown, user 0.000000 USD</td>" in conversation
    run = get(f"{viewer}/-/bench/run?id=idle")
    assert "agent do-nothing (reports model acme-large), user" in run
    row = re.search(r"<td>agent \(reported\)</td><td>acme-large</td><td class=\"num\">1</td>(.*?)</tr>", run, re.S)
    assert row and '<td class="num">321</td><td class="num">12</td>' in row.group(1) and "unknown" in row.group(1)


def test_goal_shift_events_in_place(viewer: str) -> None:
    page = get(f"{viewer}/-/bench/run?id={SHIFTED_RUN}")
    first = next(link for link in links(page) if link.startswith("/-/bench/conversation?id="))
    conversation = get(viewer + first)
    assert 'data-kind="goal.shift"' in conversation and "previous_goal:</span>" in conversation


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_canned_queries_answer(viewer: str, name: str) -> None:
    page = get(f"{viewer}/results/{name}?run=")
    assert QUERIES[name]["title"] in page and 'class="message-error"' not in page


def test_canned_query_results_link_to_conversations(viewer: str) -> None:
    page = get(f"{viewer}/results/tool_errors_by_tool?run=llm")
    assert "find_customer_by_email" in page and re.search(r"<td[^>]*>2</td>", page)
    assert f"/-/bench/conversation?id={FAILING}" in decoded(page)
    failures = get(f"{viewer}/results/failures_by_termination?run=idle")
    assert "user_stop" in failures or "agent_stop" in failures
    by_attribute = get(f"{viewer}/results/results_by_task_attribute?run=plain&attribute=domain")
    assert "mock" in by_attribute


def test_facets_on_conversations(viewer: str) -> None:
    page = get(f"{viewer}/results/conversations")
    assert 'data-column="termination_reason"' in page and 'data-column="arm"' in page


def test_comparison_page(viewer: str) -> None:
    page = get(f"{viewer}/-/bench/compare?a=plain&b=idle")
    assert "12 lost" in page and re.search(r"<td>mean reward</td>.*?-1.000", page, re.S)
    assert "/results/conversations_of_run?run=idle&arm=agent&termination_reason=&task_id=" in "".join(decoded(page))
    assert "share no task" in get(f"{viewer}/-/bench/compare?a=plain&b={SHIFTED_RUN}", 404)
    assert 'name="a"' in get(f"{viewer}/-/bench/compare")


def test_unknown_things_are_clear_404s(viewer: str) -> None:
    assert "no run 'nope'" in get(f"{viewer}/-/bench/run?id=nope", 404)
    assert "no conversation 'x/y'" in get(f"{viewer}/-/bench/conversation?id=x/y", 404)


def test_served_read_only(viewer: str, results_db: Path) -> None:
    before = hashlib.sha256(results_db.read_bytes()).hexdigest()
    response = httpx.get(f"{viewer}/results", params={"sql": "delete from runs"}, timeout=30)
    assert "Statement must be a SELECT" in html.unescape(response.text)
    get(f"{viewer}/-/bench/run?id=plain")
    assert hashlib.sha256(results_db.read_bytes()).hexdigest() == before
    databases = httpx.get(f"{viewer}/-/databases.json", timeout=30).json()
    assert [(d["name"], d["is_mutable"]) for d in databases] == [("results", False)]


def test_bench_view_refuses_an_unknown_run_or_database(tmp_path: Path, results_db: Path) -> None:
    cli = bench_cli(["view"])
    missing = CliRunner().invoke(cli, ["view", "--db", str(tmp_path / "none.db")])
    assert missing.exit_code == 1 and "no results database" in missing.output
    unknown = CliRunner().invoke(cli, ["view", "nope", "--db", str(results_db)])
    assert unknown.exit_code == 1 and "no run 'nope'" in unknown.output


def non_loopback_address() -> str | None:
    """An address of this machine other than loopback, if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET: nothing is sent, the kernel only picks a source address
        except OSError:
            return None
        address = str(s.getsockname()[0])
    return None if address.startswith("127.") else address


def test_bound_to_loopback_only(viewer: str) -> None:
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no address besides loopback")
    port = int(viewer.rsplit(":", 1)[1])
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://{address}:{port}/-/bench", timeout=5)


def test_the_agent_label_names_its_fingerprint_and_reported_models() -> None:
    from bench_view.pages import agent_label

    header = {
        "agent": "my-bot",
        "agent_fingerprint": {"openai-agents": "0.24.0", "factory": "mybot:<lambda>", "sha256": "ab" * 32},
        "agent_models": ["m1", "m2"],
    }
    assert agent_label(header) == "my-bot (openai-agents 0.24.0, factory mybot:<lambda>, sha256 abababababab…, reports model m1, m2)"
    assert agent_label({"agent": "oracle"}) == "oracle"
