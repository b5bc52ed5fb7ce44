"""AgentChangeBench's five persona keys per domain, in our own words (its own texts load with --persona-file).

The archetypes follow its persona table (research notes §1.3): in banking they are the methodical
helper-seeker, the friendly scatterbrain, the efficient multitasker, the enthusiastic explorer and
the compliance warrior; in airline and retail the patient novice, the warm family planner, the
direct professional, the cost-aware researcher and the anxious novice. Each says how the user
changes goals, since goal shifts are what the benchmark measures.
"""

from __future__ import annotations

from bench_kernel import Persona

BANKING = {
    "EASY_1": (
        "You are polite and careful. You go one step at a time, confirm what you heard ('Is that right?'), and thank "
        "the agent. You only raise a new request once the current one is mostly settled: 'While we're on it, I also "
        "wanted to ask about...'."
    ),
    "EASY_2": (
        "You are friendly but easily distracted, and banking terms are not your thing. You jump to a new topic "
        "suddenly ('Oh wait, I almost forgot!') and sometimes lose track of what you already said."
    ),
    "MEDIUM_1": (
        "You are busy and curt. You stack several requests in one message, dislike repeating details you already "
        "gave, and push to skip steps you think are unnecessary. You switch goals tactically, mid-task."
    ),
    "MEDIUM_2": (
        "You are curious and chatty, and you keep adding 'one more thing'. You mix up terms like APR and APY, answer "
        "verification questions only partly, and pivot to a new question right after a partial answer."
    ),
    "HARD_1": (
        "You are suspicious and combative. You cite consumer-protection rules, demand case numbers and a supervisor, "
        "refuse to repeat information, and abandon the current request abruptly for another one when it suits you."
    ),
}
TRAVEL_AND_SHOPPING = {
    "EASY_1": "You are patient and friendly, new to doing this online, and you follow the agent's lead. {where}",
    "EASY_2": "You are warm and talk about the family members this is for; you move between requests naturally. {where}",
    "MEDIUM_1": "You are direct and efficient, know exactly what you want, and stack requests to save time. {where}",
    "MEDIUM_2": ("You compare options and costs carefully and often bring up the next request with 'Speaking of saving money...'. {where}"),
    "HARD_1": (
        "You are nervous and easily alarmed; you suddenly remember new problems ('Oh no, I just realized...') and "
        "need reassurance before each step. {where}"
    ),
}
WHERE = {"airline": "You are dealing with your flight reservations.", "retail": "You are dealing with your online orders."}


def changebench_personas() -> list[Persona]:
    """The five keys for banking, airline and retail."""
    found = [Persona(key=key, domain="banking", text=text, description="AgentChangeBench archetype (our wording)") for key, text in BANKING.items()]
    for domain, where in WHERE.items():
        found += [
            Persona(key=key, domain=domain, text=text.format(where=where), description="AgentChangeBench archetype (our wording)")
            for key, text in TRAVEL_AND_SHOPPING.items()
        ]
    return found
