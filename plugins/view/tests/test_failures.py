"""Failures people can read on the conversation page: the task, expected against actual calls, attribution, review, run
settings, each tool result once, task ids in reading order."""

from __future__ import annotations

import html
import re
from urllib.parse import quote

import httpx
import pytest
from bench_view.task import public_url
from viewdb import ATTRIBUTED, FAILING, REVIEWED, SLOPPY_RUN


def get(url: str) -> str:
    response = httpx.get(url, timeout=30)
    assert response.status_code == 200, (url, response.status_code, response.text[:500])
    return html.unescape(response.text)


def conversation(viewer: str, cid: str) -> str:
    return get(f"{viewer}/-/bench/conversation?id={quote(cid, safe='')}")


def section(page: str, anchor: str) -> str:
    """The page from the heading with this id to the next h2."""
    start = page.index(f'id="{anchor}"')
    end = page.find("<h2", start)
    return page[start : end if end != -1 else len(page)]


def text(fragment: str) -> str:
    """The visible text of an HTML fragment, whitespace collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment)).strip()


def test_the_page_shows_the_task_it_played(viewer: str) -> None:
    page = conversation(viewer, f"{SLOPPY_RUN}/agent/6/0")
    task = section(page, "task")
    # The scenario (the mock task 'reactivate_and_restart', renamed 6 in the tasks file), from the run's tasks file.
    assert "reason for call" in task and "<th>reward basis</th>" in task
    # Each gold action with its arguments, the compared keys marked, and its ACTION check beside it.
    action = re.search(r'<div class="gold-action failed" data-action="a2">(.*?)</div>\s*(?=<div class="gold-action|<h3)', task, re.S)
    assert action, task
    assert "reactivate_line" in action.group(1) and "not called as expected" in action.group(1)
    assert re.search(r'<tr class="compared"><th>customer_id</th><td><code>"C-1002"</code></td><td class="meta">compared</td>', action.group(1))
    # Facts, env assertions (with what they must return and mean), NL assertions.
    assert "Facts to communicate" in task
    assert re.search(r"<code>assert_line_status\(customer_id=\"C-1002\", status=\"active\"\)</code></td><td>True</td>", task)


def test_a_failed_action_check_shows_expected_and_actual_arguments(viewer: str) -> None:
    checks = text(section(conversation(viewer, f"{SLOPPY_RUN}/agent/6/0"), "reward-checks"))
    assert (
        'a2 reactivate_line no expected reactivate_line(customer_id="C-1002"), compared on the keys the call gives; '
        'closest call: reactivate_line(customer_id="C-1002X") differs on customer_id'
    ) in checks
    # The DB check names the records that differ and how; the env assertion says what it expected and got.
    assert "1 record differs: customers/C-1002: line_status differs" in checks
    assert "user db no" in checks and "device/router: light, line_active differ" in checks
    assert "returned False, expected True: the line is active" in checks


def test_a_tool_never_called_says_so(viewer: str) -> None:
    checks = text(section(conversation(viewer, "idle/agent/upgrade_by_email/0"), "reward-checks"))
    assert "never called (no tool called)" in checks


def test_each_tool_result_appears_once(viewer: str) -> None:
    page = conversation(viewer, FAILING)
    assert page.count("unexpected keyword argument 'mail'") == 1
    # The tool message points to the call that shows its result.
    assert re.search(r'<div class="message tool error" id="message-3">.*?result of <a href="#message-2">find_customer_by_email</a>', page, re.S)
    sloppy = conversation(viewer, f"{SLOPPY_RUN}/agent/6/0")
    tool_messages = re.findall(r'<div class="message tool[^"]*" id="message-\d+">(.*?)\n</div>', sloppy, re.S)
    assert len(tool_messages) == 3 and all("result of" in m and 'class="content"' not in m for m in tool_messages)
    assert len(re.findall(r'<pre class="result">', sloppy)) == 3 and sloppy.count('"line_status": "suspended"') == 1


def test_attribution_and_review_findings(viewer: str) -> None:
    page = conversation(viewer, ATTRIBUTED)
    attribution = text(re.search(r'<td id="attribution">(.*?)</td>', page, re.S).group(1))  # type: ignore[union-attr]
    assert attribution == "agent rule wrong-arguments, by rules cancel_reservation called with another id"
    if ATTRIBUTED == REVIEWED and 'id="review"' not in page:
        pytest.skip("bench-review is not installed: no review tables in the test database")
    review = text(section(page, "review"))
    assert "review full review by fake-reviewer" in review and "The agent used the wrong argument in its write." in review
    assert "agent wrong_arguments critical 4 It changed the value." in review
    assert "review failed: ReviewReplyError: no JSON in the reply" in review


def test_pages_without_attribution_or_review(viewer: str) -> None:
    page = conversation(viewer, f"{SLOPPY_RUN}/agent/1/0")  # passed: no attribution, never reviewed
    assert 'id="verdict">passed<' in page and 'id="attribution"' not in page and 'id="review"' not in page and 'id="task"' in page


def test_run_settings_on_the_conversation_and_run_pages(viewer: str) -> None:
    for page in (conversation(viewer, FAILING), get(f"{viewer}/-/bench/run?id=llm")):
        settings = text(section(page, "run-settings"))
        assert "profile bench sha256" in settings
        assert "data the domain plugin's packaged suite" in settings
        assert re.search(r"agent: fake-model backend openai, http://127\.0\.0\.1:\d+/v1, key from \$VIEW_KEY", settings), settings
        assert "plugins mock" in settings and "openai" in settings


def test_base_urls_lose_what_may_be_secret() -> None:
    assert public_url("https://user:pw@api.example.com:8443/v1?api-key=abc#x") == "https://api.example.com:8443/v1 (query left out)"
    assert public_url("http://127.0.0.1:9000/v1") == "http://127.0.0.1:9000/v1"
    assert public_url(None) is None


def test_task_ids_in_reading_order(viewer: str) -> None:
    run = get(f"{viewer}/-/bench/run?id={SLOPPY_RUN}")
    tasks = re.findall(r"<tr class=\"(?:passed|failed)\"><td>(\d+)</td>", section(run, "tasks"))
    assert tasks == [str(n) for n in range(1, 13)]
    listed = get(f"{viewer}/results/conversations_of_run?run={SLOPPY_RUN}&arm=agent&termination_reason=&task_id=")
    ids = re.findall(r"sloppy/agent/(\d+)/0</a>", listed)
    assert ids == [str(n) for n in range(1, 13)]


def test_a_task_composed_for_the_run_is_explained(viewer: str) -> None:
    run = get(f"{viewer}/-/bench/run?id=shifts")
    first = re.search(r'href="(/-/bench/conversation\?id=[^"]+)"', run).group(1)  # type: ignore[union-attr]
    page = get(viewer + html.unescape(first))
    task = section(page, "task")
    assert 'id="scenario"' in task or "is not among the" in task
