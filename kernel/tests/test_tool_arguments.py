"""What a tool method receives for each kind of annotation (docs/plugins.md, "What a tool receives"), and the error a
model reads when its arguments do not fit."""

from __future__ import annotations

import enum
from typing import Any, Literal

import attrs
import pytest

from bench_kernel import Environment, State, ToolCall, ToolError, ToolKind, Toolkit, tool, tool_arguments


class Form(enum.Enum):
    TABLET = "tablet"
    SYRUP = "syrup"


@attrs.frozen
class Dose:
    amount: int
    form: Form
    unit: Literal["mg", "ml"] = "mg"


@attrs.frozen
class Prescription:
    patient_id: str
    doses: list[Dose]
    note: str | None = None


class Pharmacy(Toolkit):
    """Tools that hand back what they received, to show its type."""

    @tool(ToolKind.WRITE)
    def fill(
        self,
        prescription: Prescription,
        form: Form,
        urgency: Literal["normal", "urgent"],
        extra: dict[str, Any],
        forms: list[Form],
        backup: Dose | None = None,
        raw: Dose | dict[str, Any] | None = None,
    ) -> str:
        """Fill a prescription.

        Args:
            prescription (Prescription): The prescription.
            form (Form): The form wanted.
            urgency (str): How soon.
            extra (dict): Anything else, as sent.
            forms (list): Forms the patient accepts.
            backup (Dose): A second dose, if any.
            raw (Dose | dict): Kept as sent: a union of several types.
        """
        self.state["seen"]["last"] = {"received": (prescription, form, urgency, extra, forms, backup, raw)}
        return "filled"

    def has_form(self, form: Form) -> bool:
        """For task files: the assertion receives the member too."""
        return isinstance(form, Form)


ARGUMENTS = {
    "prescription": {"patient_id": "P-1", "doses": [{"amount": 5, "form": "syrup", "unit": "ml"}]},
    "form": "tablet",
    "urgency": "whenever",
    "extra": {"gift_wrap": True},
    "forms": ["tablet", "syrup"],
    "backup": {"amount": 1, "form": "tablet"},
    "raw": {"anything": 1},
}


def received(arguments: dict[str, Any]) -> tuple[Any, ...]:
    toolkit = Pharmacy(State.from_records({"seen": {}}))
    assert toolkit.call_tool("fill", arguments) == "filled"
    return toolkit.state["seen"]["last"]["received"]


def test_enums_become_members_attrs_classes_instances_and_the_rest_arrives_as_sent() -> None:
    prescription, form, urgency, extra, forms, backup, raw = received(ARGUMENTS)
    assert prescription == Prescription(patient_id="P-1", doses=[Dose(amount=5, form=Form.SYRUP, unit="ml")])
    assert form is Form.TABLET and forms == [Form.TABLET, Form.SYRUP]
    assert backup == Dose(amount=1, form=Form.TABLET)
    assert urgency == "whenever"  # a Literal parameter arrives unchecked: the tool decides, as tau2's tools do
    assert extra == {"gift_wrap": True} and raw == {"anything": 1}


def test_none_passes_for_an_optional_parameter() -> None:
    assert received({**ARGUMENTS, "backup": None})[5] is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"form": "powder"}, r"invalid arguments: 'powder' is not one of \['tablet', 'syrup'\] @ form"),
        (
            {"prescription": {"patient_id": "P-1", "doses": [{"amount": "lots", "form": "syrup"}]}},
            r"invalid arguments: invalid value for type, expected int @ prescription.doses\[0\].amount",
        ),
        ({"prescription": {"patient_id": "P-1", "doses": [], "colour": "red"}}, r"invalid arguments: extra fields found \(colour\) @ prescription"),
        ({"prescription": "P-1"}, r"invalid arguments: cannot read 'P-1' as Prescription .* @ prescription"),
    ],
)
def test_arguments_that_do_not_fit_are_a_tool_error_naming_the_path(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError, match=message):
        received({**ARGUMENTS, **change})


def test_the_model_reads_the_error_as_the_tools_result() -> None:
    env = Environment(agent_tools=Pharmacy(State.from_records({"seen": {}})))
    result = env.execute(ToolCall(id="c1", name="fill", arguments={**ARGUMENTS, "form": "powder"}))
    assert result.error and result.content == "Error: invalid arguments: 'powder' is not one of ['tablet', 'syrup'] @ form"


def test_task_file_functions_receive_the_same_types() -> None:
    assert Pharmacy(State.from_records({"seen": {}})).call_function("has_form", {"form": "syrup"}) is True


def test_the_schema_offers_what_the_method_accepts() -> None:
    properties = Pharmacy.specs()["fill"].schema["function"]["parameters"]["properties"]
    assert properties["form"]["enum"] == ["tablet", "syrup"]
    assert properties["urgency"]["enum"] == ["normal", "urgent"]
    dose = properties["prescription"]["properties"]["doses"]["items"]
    assert dose["properties"]["form"]["enum"] == ["tablet", "syrup"] and dose["required"] == ["amount", "form"]


def test_plain_functions_are_converted_too() -> None:
    def pick(form: Form, count: int) -> None:
        """Not a tool."""

    assert tool_arguments(pick, {"form": "syrup", "count": 2}) == {"form": Form.SYRUP, "count": 2}
    assert tool_arguments(pick, {"form": Form.TABLET}) == {"form": Form.TABLET}  # Python callers may pass members
