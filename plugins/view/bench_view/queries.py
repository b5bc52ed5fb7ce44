"""Canned queries and facets: the questions people ask a results database, one click each.

Every query takes an optional :run (empty for every run); conversation ids in the results link to
the conversation page (see `render_cell` in datasette_plugin.py).
"""

from __future__ import annotations

from typing import Any

RUN = "(:run = '' or c.run_id = :run)"
SCORED = "c.arm = 'agent' and c.termination_reason != 'infrastructure_error'"
# Success is the kernel's is_success: a reward within 1e-6 of 1.
PASSED = "c.reward >= 1 - 1e-6"

ANY = "(:{0} = '' or c.{0} = :{0})"

QUERIES: dict[str, dict[str, Any]] = {
    "conversations_of_run": {
        "title": "Conversations of a run (by arm, termination reason, task)",
        "sql": f"""select c.id as conversation_id, c.task_id, c.trial, c.arm, c.reward, c.termination_reason, c.error,
c.duration_ms, c.num_messages from conversations c
where {RUN} and {ANY.format("arm")} and {ANY.format("termination_reason")} and {ANY.format("task_id")}
order by c.arm, c.task_id collate task_id, c.trial""",
    },
    "metric_values_of_run": {
        "title": "A metric's values in a run, by conversation",
        "sql": f"""select v.conversation_id, c.task_id, c.trial, v.plugin, v.metric, v.value, v.error, v.details_json
from metric_values v join conversations c on c.id = v.conversation_id
where {RUN} and c.arm = 'agent' and (:plugin = '' or v.plugin = :plugin) and (:metric = '' or v.metric = :metric)
order by c.task_id collate task_id, c.trial""",
    },
    "failures_by_termination": {
        "title": "Failures by termination reason",
        "sql": f"""select c.run_id, c.termination_reason, count(*) as failures, min(c.id) as example_conversation_id
from conversations c where {SCORED} and not ({PASSED}) and {RUN}
group by c.run_id, c.termination_reason order by failures desc""",
    },
    "tool_errors_by_tool": {
        "title": "Tool errors by tool",
        "sql": f"""select c.run_id, t.name as tool, count(*) as errors, min(t.conversation_id) as example_conversation_id
from tool_calls t join conversations c on c.id = t.conversation_id where t.error = 1 and {RUN}
group by c.run_id, t.name order by errors desc""",
    },
    "results_by_persona": {
        "title": "Results by persona",
        "sql": f"""select c.run_id, coalesce(json_extract(c.attributes_json, '$.persona'), '(none)') as persona,
count(*) as conversations, round(avg(c.reward), 4) as mean_reward, round(avg({PASSED}), 4) as success_rate
from conversations c where {SCORED} and {RUN} group by c.run_id, persona order by c.run_id, persona""",
    },
    "results_by_shift_position": {
        "title": "Results by goal-shift position",
        "sql": f"""select c.run_id, json_extract(e.data_json, '$.goal_index') as shift_position, count(*) as shifts,
count(distinct c.id) as conversations, round(avg(c.reward), 4) as mean_reward, round(avg({PASSED}), 4) as success_rate
from conversation_events e join conversations c on c.id = e.conversation_id
where e.kind = 'goal.shift' and {SCORED} and {RUN} group by c.run_id, shift_position order by c.run_id, shift_position""",
    },
    "results_by_task_attribute": {
        "title": "Results by a task attribute (domain, persona, intent, shifts, ...)",
        "sql": f"""select c.run_id, coalesce(nullif(:attribute, ''), 'domain') as attribute,
coalesce(json_extract(c.attributes_json, '$.' || coalesce(nullif(:attribute, ''), 'domain')), '(none)') as value,
count(*) as conversations, round(avg(c.reward), 4) as mean_reward, round(avg({PASSED}), 4) as success_rate
from conversations c where {SCORED} and {RUN} group by c.run_id, value order by c.run_id, value""",
    },
    # group_concat follows the order rows arrive in, hence the subquery ordered by trial.
    "tasks_that_flip": {
        "title": "Tasks that flip across trials",
        "sql": f"""select c.run_id, c.task_id, count(*) as trials, sum({PASSED}) as successes,
group_concat(case when {PASSED} then 'pass' else 'fail' end, ' ') as outcomes_by_trial, min(c.id) as first_conversation_id
from (select * from conversations order by trial) c where {SCORED} and {RUN}
group by c.run_id, c.task_id having successes > 0 and successes < trials order by c.run_id, c.task_id collate task_id""",
    },
    "most_expensive_conversations": {
        "title": "The most expensive conversations",
        "sql": f"""select c.id as conversation_id, c.run_id, c.task_id, c.trial, c.reward,
round(coalesce(sum(l.cost), 0), 6) as cost_usd, sum(l.prompt_tokens) as prompt_tokens,
sum(l.completion_tokens) as completion_tokens, count(l.id) as model_calls
from conversations c left join llm_calls l on l.conversation_id = c.id where {RUN}
group by c.id order by cost_usd desc, prompt_tokens desc limit 50""",
    },
}

FACETS = {
    "conversations": ["run_id", "arm", "termination_reason", "agent", "task_id"],
    "tool_calls": ["name", "error", "requestor"],
    "metric_values": ["plugin", "metric"],
    "llm_calls": ["role", "model", "kind"],
    "conversation_events": ["kind", "source"],
}


def metadata(database: str) -> dict[str, Any]:
    """Datasette metadata: the canned queries and default facets of the results database."""
    tables: dict[str, dict[str, Any]] = {table: {"facets": facets} for table, facets in FACETS.items()}
    tables["conversations"]["sort_desc"] = "started_utc"
    return {"title": "bench results", "databases": {database: {"queries": QUERIES, "tables": tables}}}
