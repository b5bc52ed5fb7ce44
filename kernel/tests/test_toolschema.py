"""Tests of tool schemas from signatures and docstrings, and of tool result serialisation."""

from __future__ import annotations

import datetime
import enum
import json
import re
from typing import Any, Literal

import attrs
import pytest

from bench_kernel.tools.toolschema import function_schema, tool_result_text

# --------------------------------------------------------------------------- sample tools


class Cabin(str, enum.Enum):
    ECONOMY = "economy"
    BUSINESS = "business"


class Status(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


@attrs.frozen
class Passenger:
    first_name: str
    age: int
    dob: str | None = None


@attrs.frozen
class Reservation:
    reservation_id: str
    total: float
    seats: int
    cabin: Cabin
    status: Status
    passengers: list[Passenger] = attrs.field(factory=list)


def update_reservation(
    reservation_id: str,
    cabin: Literal["economy", "business"],
    passengers: list[Passenger],
    nights: int = 2,
    insurance: bool | None = None,
    note: str | None = "none",
    price_cap: float | None = 10.5,
    extra: Any = None,
    tags: dict[str, str] | None = None,
    flags=None,
) -> str:
    """Update a reservation.

    Only reservations that are not flown yet
    can be updated.

    Args:
        reservation_id: The reservation ID, such as '8JX2WO'.
        cabin (str): The cabin class.
        passengers: The passengers,
            each with a name and an age.
        nights: How many nights.
        insurance:
            Whether to buy insurance.
        note: A free note.

    Returns:
        A confirmation.

    Raises:
        ValueError: If the reservation is not found.
    """
    return "ok"


def no_doc(x: int, y):
    return x


class Toolkit:
    def get_user(self, user_id: str, verbose: bool = False) -> str:
        """Get a user.

        Args:
            user_id: The user ID.
        """
        return user_id


# --------------------------------------------------------------------------- function_schema


def test_sample_tool_gives_the_exact_schema():
    assert function_schema(update_reservation, strict=False) == {
        "type": "function",
        "function": {
            "name": "update_reservation",
            "description": "Update a reservation.\n\nOnly reservations that are not flown yet\ncan be updated.",
            "parameters": {
                "type": "object",
                "properties": {
                    "reservation_id": {
                        "title": "Reservation Id",
                        "type": "string",
                        "description": "The reservation ID, such as '8JX2WO'.",
                    },
                    "cabin": {
                        "title": "Cabin",
                        "type": "string",
                        "enum": ["economy", "business"],
                        "description": "The cabin class.",
                    },
                    "passengers": {
                        "title": "Passengers",
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "first_name": {"title": "First Name", "type": "string"},
                                "age": {"title": "Age", "type": "integer"},
                                "dob": {"title": "Dob", "type": "string"},
                            },
                            "required": ["first_name", "age"],
                        },
                        "description": "The passengers,\neach with a name and an age.",
                    },
                    "nights": {
                        "title": "Nights",
                        "type": "integer",
                        "description": "How many nights.",
                        "default": 2,
                    },
                    "insurance": {
                        "title": "Insurance",
                        "type": "boolean",
                        "description": "Whether to buy insurance.",
                    },
                    "note": {
                        "title": "Note",
                        "type": "string",
                        "description": "A free note.",
                        "default": "none",
                    },
                    "price_cap": {"title": "Price Cap", "type": "number", "default": 10.5},
                    "extra": {"title": "Extra"},
                    "tags": {"title": "Tags", "type": "object"},
                    "flags": {"title": "Flags"},
                },
                "required": ["reservation_id", "cabin", "passengers"],
            },
        },
    }


def test_schema_is_json_serialisable_and_keeps_parameter_order():
    schema = function_schema(update_reservation, strict=False)
    assert json.loads(json.dumps(schema)) == schema
    assert list(schema["function"]["parameters"]["properties"])[:3] == [
        "reservation_id",
        "cabin",
        "passengers",
    ]


def test_summary_only_docstring_has_no_blank_line():
    schema = function_schema(Toolkit().get_user, strict=False)
    assert schema["function"]["description"] == "Get a user."


def test_method_skips_self_bound_or_not():
    for func in (Toolkit().get_user, Toolkit.get_user):
        params = function_schema(func, strict=False)["function"]["parameters"]
        assert list(params["properties"]) == ["user_id", "verbose"]
        assert params["required"] == ["user_id"]
        assert params["properties"]["verbose"] == {
            "title": "Verbose",
            "type": "boolean",
            "default": False,
        }


def test_name_override_and_missing_docstring():
    schema = function_schema(no_doc, name="renamed", strict=False)
    assert schema["function"]["name"] == "renamed"
    assert schema["function"]["description"] == "renamed"
    assert schema["function"]["parameters"] == {
        "type": "object",
        "properties": {"x": {"title": "X", "type": "integer"}, "y": {"title": "Y"}},
        "required": ["x", "y"],
    }


def test_enum_annotations_list_their_values():
    def pick(cabin: Cabin, levels: list[Literal[1, 2]] = [1]) -> None:  # noqa: B006
        """Pick."""

    props = function_schema(pick, strict=False)["function"]["parameters"]["properties"]
    assert props["cabin"] == {"title": "Cabin", "type": "string", "enum": ["economy", "business"]}
    assert props["levels"] == {
        "title": "Levels",
        "type": "array",
        "items": {"type": "integer", "enum": [1, 2]},
        "default": [1],
    }


def test_enum_default_shows_its_value_and_unserialisable_default_is_left_out():
    def pick(cabin: Cabin = Cabin.BUSINESS, when: Any = datetime.date(2024, 1, 2)) -> None:
        """Pick."""

    props = function_schema(pick, strict=False)["function"]["parameters"]["properties"]
    assert props["cabin"]["default"] == "business"
    assert "default" not in props["when"]


def test_variadic_parameters_are_refused():
    def star(a: int, *args: int) -> None:
        """Star."""

    def double_star(a: int, **kwargs: Any) -> None:
        """Double star."""

    with pytest.raises(ValueError, match="'star'"):
        function_schema(star)
    with pytest.raises(ValueError, match=r"'double_star'.*kwargs"):
        function_schema(double_star)


def test_docstring_naming_a_missing_parameter_is_refused():
    def typo(reservation_id: str) -> None:
        """Typo.

        Args:
            reservaton_id: The reservation.
        """

    with pytest.raises(ValueError, match=r"'typo'.*reservaton_id"):
        function_schema(typo)


def test_unresolvable_or_unsupported_annotation_is_refused():
    def unresolvable(x: NoSuchType) -> None:  # noqa: F821
        """Bad."""

    def unsupported(x: datetime.date) -> None:
        """Bad."""

    with pytest.raises(ValueError, match="'unresolvable'"):
        function_schema(unresolvable)
    with pytest.raises(ValueError, match=r"'unsupported'.*'x'"):
        function_schema(unsupported)


# --------------------------------------------------------------------------- tool_result_text


def test_str_is_returned_verbatim():
    assert tool_result_text('Error: no "such" reservation') == 'Error: no "such" reservation'
    assert tool_result_text("") == ""


def test_none_is_null():
    assert tool_result_text(None) == "null"


def test_bare_scalars_are_stringified_then_json_dumped_like_tau2():
    # tau2 only skips json.dumps for str, so str(5) is dumped again and gains quotes
    assert tool_result_text(5, "tau2") == '"5"'
    assert tool_result_text(True, "tau2") == '"True"'
    assert tool_result_text(2.5, "tau2") == '"2.5"'


def test_containers_stringify_nested_scalars():
    assert tool_result_text({"a": 1, "b": [2.5, None, "x"]}, "tau2") == '{"a": "1", "b": ["2.5", null, "x"]}'
    assert tool_result_text((1, False), "tau2") == '["1", "False"]'
    assert tool_result_text([], "tau2") == "[]"


def test_plain_json_is_the_default_numbers_and_booleans_stay_what_they_are():
    assert tool_result_text({"max_loans": 3, "active": True, "fee": 2.5, "b": [1, None, "x"]}) == (
        '{"max_loans": 3, "active": true, "fee": 2.5, "b": [1, null, "x"]}'
    )
    assert tool_result_text(5) == "5"
    assert tool_result_text(False) == "false"
    assert tool_result_text((1, False)) == "[1, false]"
    assert tool_result_text({"on": datetime.date(2024, 5, 1), "s": Status.OPEN}) == '{"on": "2024-05-01", "s": "open"}'
    assert tool_result_text([Passenger("Bo", 7)]) == tool_result_text([Passenger("Bo", 7)], "tau2")


def test_an_unknown_style_is_refused():
    with pytest.raises(ValueError, match="unknown tool result style 'yaml'"):
        tool_result_text({"a": 1}, "yaml")  # type: ignore[arg-type]


def test_attrs_record_keeps_numbers_and_enum_values():
    record = Reservation(
        reservation_id="ABC",
        total=12.5,
        seats=2,
        cabin=Cabin.ECONOMY,
        status=Status.OPEN,
        passengers=[Passenger("Ann", 30)],
    )
    assert tool_result_text(record) == (
        '{"reservation_id": "ABC", "total": 12.5, "seats": 2, "cabin": "economy", '
        '"status": "open", "passengers": [{"first_name": "Ann", "age": 30, "dob": null}]}'
    )


def test_attrs_records_inside_a_list_keep_numbers():
    assert tool_result_text([Passenger("Bo", 7)]) == '[{"first_name": "Bo", "age": 7, "dob": null}]'


def test_dates_and_datetimes():
    day = datetime.date(2024, 5, 1)
    moment = datetime.datetime(2024, 5, 1, 13, 30)
    assert tool_result_text(day) == '"2024-05-01"'
    assert tool_result_text({"on": day}) == '{"on": "2024-05-01"}'
    assert tool_result_text({"at": moment}) == '{"at": "2024-05-01T13:30:00"}'


@attrs.frozen
class Booking:
    on: datetime.date
    at: datetime.datetime


def test_datetimes_inside_records_use_str():
    booking = Booking(datetime.date(2024, 5, 1), datetime.datetime(2024, 5, 1, 13, 30))
    assert tool_result_text(booking) == '{"on": "2024-05-01", "at": "2024-05-01 13:30:00"}'


def test_enum_members_become_their_values():
    assert tool_result_text(Cabin.BUSINESS) == "business"
    assert tool_result_text(Status.CLOSED) == "closed"
    assert tool_result_text({"s": Status.OPEN, "c": Cabin.ECONOMY}) == '{"s": "open", "c": "economy"}'


# --------------------------------------------------------------------------- docstrings checked at load (strict)


def test_a_parameter_the_docstring_leaves_out_is_refused_naming_tool_and_parameter():
    with pytest.raises(ValueError, match=r"tool 'get_user': docstring does not document parameters \['verbose'\]"):
        function_schema(Toolkit().get_user)
    with pytest.raises(ValueError, match=r"tool 'renamed': docstring does not document parameters \['x', 'y'\]"):
        function_schema(no_doc, name="renamed")


def test_a_documented_type_that_disagrees_with_the_annotation_is_refused():
    def book(seats: str, note: str | None = None) -> None:
        """Book.

        Args:
            seats (int): How many seats.
            note: A note.
        """

    with pytest.raises(ValueError, match=r"tool 'book', parameter 'seats': the docstring says \(int\) but the annotation is str"):
        function_schema(book)


@pytest.mark.parametrize(
    "written, annotation",
    [
        ("str", str),
        ("string", str),
        ("Optional[str]", str | None),
        ("str, optional", str | None),
        ("int", int),
        ("List[str]", list[str]),
        ("list of str", list[str]),
        ("Dict[str, Any]", dict[str, Any]),
        ("dict", dict[str, int]),
        ("int | str", int),
        ("str or None", str | None),
        ("Cabin", Cabin),
        ("Passenger", Passenger),
        ("bool", bool | None),
        ("SomethingUnknown", int),
        ("Literal['a']", str),
        ("float", float),
        ("Union[int, str]", str),
    ],
)
def test_documented_types_that_agree_or_cannot_be_read_pass(written: str, annotation: Any):
    def tool(x):
        return x

    tool.__doc__ = f"Tool.\n\nArgs:\n    x ({written}): The x.\n"
    tool.__annotations__ = {"x": annotation}
    assert function_schema(tool)["function"]["parameters"]["properties"]["x"]["description"] == "The x."


@pytest.mark.parametrize(
    "written, annotation",
    [
        ("int", str),
        ("str", int),
        ("List[str]", str),
        ("dict", list[str]),
        ("bool", str | None),
        ("float", int),
        ("Passenger", str),
        ("Optional[int]", str),
    ],
)
def test_documented_types_that_disagree_are_refused(written: str, annotation: Any):
    def tool(x):
        return x

    tool.__doc__ = f"Tool.\n\nArgs:\n    x ({written}): The x.\n"
    tool.__annotations__ = {"x": annotation}
    with pytest.raises(ValueError, match=rf"parameter 'x': the docstring says \({re.escape(written)}\)"):
        function_schema(tool)


def test_a_lenient_schema_still_refuses_unknown_documented_parameters():
    def typo(reservation_id: str) -> None:
        """Typo.

        Args:
            reservaton_id: The reservation.
        """

    with pytest.raises(ValueError, match="reservaton_id"):
        function_schema(typo, strict=False)
