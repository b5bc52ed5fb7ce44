"""Critical fields: the identifiers, numbers and names a spoken conversation must get exactly right.

A field is found in what the user meant to say (phone numbers, emails, order ids) and looked for in
what was heard, after canonicalising both (digits only for numbers; "at"/"dot" spoken forms for emails;
spelled-out ids joined back). Critical-field accuracy is the share of fields said that were heard
exactly. For speech, ids are said the way a person reads them: character by character.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs

PHONE = re.compile(r"(?:\+?\d{1,3}[\s-])?\(?\d{3}\)?[\s-]\d{3}[\s-]\d{4}|\+1\d{10}")
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
ORDER = re.compile(r"#[A-Za-z]{0,2}\d{5,}")
KINDS = {"phone": PHONE, "email": EMAIL, "order_id": ORDER}
LETTER_WORDS = {
    "are": "r",
    "our": "r",
    "ar": "r",
    "see": "c",
    "sea": "c",
    "bee": "b",
    "be": "b",
    "dee": "d",
    "gee": "g",
    "jay": "j",
    "kay": "k",
    "el": "l",
    "em": "m",
    "en": "n",
    "oh": "o",
    "pee": "p",
    "cue": "q",
    "queue": "q",
    "es": "s",
    "tea": "t",
    "tee": "t",
    "you": "u",
    "vee": "v",
    "ex": "x",
    "why": "y",
    "zed": "z",
    "zee": "z",
    "double": "",
    "hash": "#",
    "hashtag": "#",
    "pound": "#",
    "number": "#",
}
DIGIT_WORDS = {
    "zero": "0",
    "oh": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
}


@attrs.frozen
class Field:
    """One critical value the user says, of a kind (phone, email, order_id)."""

    kind: str
    value: str

    @property
    def canonical(self) -> str:
        """The value as compared."""
        return canonical(self.kind, self.value)


def fields_in(text: str, declared: Iterable[str] = ()) -> list[Field]:
    """The critical fields a text says, in order of appearance: phones, emails, order ids, and the task's declared values."""
    found = [(m.start(), Field(kind, m.group(0))) for kind, pattern in KINDS.items() for m in pattern.finditer(text)]
    taken = {f.value for _, f in found}
    for value in declared:
        at = text.lower().find(value.lower())
        if value and at >= 0 and value not in taken:
            found.append((at, Field("declared", value)))
    return [f for _, f in sorted(found, key=lambda x: x[0])]


def canonical(kind: str, value: str) -> str:
    """Digits for phones, lower case for emails, upper-case letters and digits for order ids, words for declared values."""
    if kind == "phone":
        return re.sub(r"\D", "", value)[-10:]
    if kind == "email":
        return value.strip().lower().rstrip(".")
    if kind == "declared":
        return " ".join(re.findall(r"[a-z0-9]+", value.lower()))
    return "#" + re.sub(r"[^A-Za-z0-9]", "", value).upper()


def heard_values(kind: str, heard: str) -> list[str]:
    """Candidates of a kind in recognised text, spoken forms undone ("at"/"dot", digits and letters read one by one)."""
    text = heard.replace(",", "")
    if kind == "declared":
        return [" ".join(re.findall(r"[a-z0-9]+", text.lower()))]  # the whole utterance; accuracy looks for the value in it
    if kind == "email":
        text = re.sub(r"\s+at\s+", "@", text, flags=re.I)
        text = re.sub(r"\s+dot\s+", ".", text, flags=re.I)
        text = re.sub(r"(?<=[A-Za-z0-9._-])\s+(?=\d+@)", "", text)  # "varga 742@...": recognisers split digits off a name
        return [canonical(kind, m.group(0)) for m in EMAIL.finditer(text)]
    if kind == "phone":
        digits = _joined_digits(text)
        return [d[-10:] for d in re.findall(r"\d{10,11}", digits)]
    tokens = [LETTER_WORDS.get(t.lower(), DIGIT_WORDS.get(t.lower(), t)) for t in re.findall(r"[A-Za-z]+|\d+|#", text)]
    joined = "".join(t if len(t) <= 1 or t.isdigit() or t == "#" else " " for t in tokens)
    return ["#" + m.upper() for m in re.findall(r"#?([A-Za-z]{0,2}\d{5,})", joined)]


def _joined_digits(text: str) -> str:
    words = re.findall(r"[A-Za-z]+|\d+", text)
    return "".join(DIGIT_WORDS.get(w.lower(), w) if w.isdigit() or w.lower() in DIGIT_WORDS else " " for w in words)


def for_speech(text: str) -> str:
    """Text as a person reads it aloud: order ids character by character, with a pause after each (phones and emails
    are read well as they are)."""
    # Measured with piper + Whisper tiny.en: "R 1 4 7 ..." was heard as "our 1472404" or lost digits; "R, 1, 4, 7, ..." exactly.
    return ORDER.sub(lambda m: "number " + ", ".join(m.group(0).lstrip("#")) + ",", text)


def accuracy(said: Iterable[Field], heard: str) -> tuple[int, int, list[dict[str, str]]]:
    """(fields heard exactly, fields said, what was misheard) for one message."""
    fields = list(said)
    misses = []
    for f in fields:
        found = heard_values(f.kind, heard)
        if f.kind == "declared" and f" {f.canonical} " in f" {found[0]} ":
            continue
        if f.canonical not in found:
            misses.append({"kind": f.kind, "meant": f.value, "heard": heard[:200]})
    return len(fields) - len(misses), len(fields), misses
