"""Context injection (MM-tau-p²'s exposure p=2): every 3 user messages a profiler infers who the customer is from the
last 16 messages, and the agent's system prompt carries the profile from then on.

The profiler is the `profiler` model role when the run configures one (asked for a JSON profile), else a
deterministic rules profiler. Every inference is a `profile.inferred` event in the store.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs

from bench_kernel import ChatRequest, ConversationSetup

EVERY = 3
WINDOW = 16
FRUSTRATION = ("annoyed", "frustrat", "again", "still not", "not working", "ridiculous", "useless", "ugh", "!")
TECHNICAL = ("apn", "vpn", "roaming", "settings", "network", "mms", "data saver", "sim", "wifi", "wi-fi", "reboot", "account")


@attrs.frozen(kw_only=True)
class ProfileInferred:
    """What the profiler inferred, and from how many user messages."""

    kind: ClassVar[str] = "profile.inferred"
    source: str
    user_messages: int
    profile: dict[str, Any]


def rules_profile(texts: Sequence[str]) -> dict[str, Any]:
    """A deterministic profile from the customer's own words."""
    joined = " ".join(texts).lower()
    words = [len(t.split()) for t in texts] or [0]
    frustration = min(10, 2 * sum(joined.count(w) for w in FRUSTRATION))
    technical = min(10, 2 * sum(joined.count(w) for w in TECHNICAL))
    articulation = min(10, round(statistics.fmean(words) / 3))
    persona = ("impatient" if frustration >= 6 else "calm") + ", " + ("technically at ease" if technical >= 6 else "not technical")
    return {
        "age": "N/A",
        "gender": "N/A",
        "articulation_skill": articulation,
        "language_understanding_skill": "N/A",
        "technical_skill": technical,
        "frustration_level": frustration,
        "persona": f"A {persona} customer.",
        "reasoning": f"From {len(texts)} messages: {statistics.fmean(words):.0f} words on average, "
        f"{frustration // 2} signs of frustration, {technical // 2} technical terms.",
    }


async def infer(setup: ConversationSetup, conversation: Sequence[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """(source, profile) from the last messages: the profiler role when configured, else the rules."""
    window = [m for m in conversation if m.get("role") in ("user", "assistant") and m.get("content")][-WINDOW:]
    customer = [str(m["content"]) for m in window if m["role"] == "user"]
    if setup.models is None or not setup.models.has("profiler"):
        return "rules", rules_profile(customer)
    transcript = "\n".join(f"{'customer' if m['role'] == 'user' else 'agent'}: {m['content']}" for m in window)
    response = await setup.models.complete(
        "profiler",
        ChatRequest(
            messages=[{"role": "system", "content": setup.profile.text("profiler")}, {"role": "user", "content": transcript}],
            response_format={"type": "json_object"},
            seed=setup.seed,
        ),
    )
    try:
        found = json.loads(re.sub(r"^```(json)?|```$", "", (response.content or "").strip()))
    except json.JSONDecodeError:
        return "rules (the profiler's reply was not JSON)", rules_profile(customer)
    return "profiler", found if isinstance(found, dict) else rules_profile(customer)


def profile_block(setup: ConversationSetup, profile: dict[str, Any]) -> str:
    """The inferred profile as the agent's prompt shows it (the run profile's `customer_profile` text)."""
    return setup.profile.render("customer_profile", profile=json.dumps(profile, ensure_ascii=False, sort_keys=True))
