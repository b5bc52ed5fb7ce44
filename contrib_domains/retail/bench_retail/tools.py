"""The retail agent's 16 tools, with tau2-bench's checks, messages and arithmetic.

Every rule that decides the final database follows tau2 exactly, quirks included, because
tau2's hashes are the test: see the README's list. A tool checks before it changes anything,
and where tau2 changes part of the state before a later check fails, so does this.
"""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Callable
from typing import Any

from bench_kernel import ToolError, ToolKind, Toolkit, tool

from .records import CANCEL_REASONS, GiftCard, Order, OrderPayment, PaymentMethod, Product, User, UserAddress, Variant

TRANSFER_REPLY = "Transfer successful"
_CALCULATOR_CHARS = frozenset("0123456789+-*/(). ")


class RetailTools(Toolkit):
    """An online shop's customer-service tools over the products, users and orders tables."""

    # ------------------------------------------------------------------ generic

    @tool(ToolKind.GENERIC)
    def calculate(self, expression: str) -> str:
        """Calculate the result of a mathematical expression.

        Args:
            expression: The expression to calculate, such as '2 + 2'. It may contain numbers, the operators +, -, *, /, parentheses and spaces.
        """
        if not all(char in _CALCULATOR_CHARS for char in expression):
            raise ToolError("Invalid characters in expression")
        return str(round(float(evaluate_arithmetic(expression)), 2))

    @tool(ToolKind.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer the user to a human agent, with a summary of the user's issue.

        Only transfer when the user explicitly asks for a human agent, or when the policy and the available tools cannot solve the user's issue.

        Args:
            summary: A short account of what the user needs.
        """
        return TRANSFER_REPLY

    # ------------------------------------------------------------------ read

    @tool(ToolKind.READ)
    def find_user_id_by_email(self, email: str) -> str:
        """Find a user id by email address. Returns an error if no user has that email.

        Args:
            email: The user's email address, for example 'name@example.com'.
        """
        wanted = email.lower()
        for user_id, user in self.state["users"].items():
            if user.email.lower() == wanted:
                return user_id
        raise ToolError("User not found")

    @tool(ToolKind.READ)
    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        """Find a user id by first name, last name and zip code. Returns an error if no user matches.

        Look users up by email first; use this only when the user is not found by email or cannot remember it.

        Args:
            first_name: Customer's first name, for example 'John'.
            last_name: Customer's last name, for example 'Doe'.
            zip: Customer's zip code, for example '12345'.
        """
        first, last = first_name.lower(), last_name.lower()
        for user_id, user in self.state["users"].items():
            if user.name.first_name.lower() == first and user.name.last_name.lower() == last and user.address.zip == zip:
                return user_id
        raise ToolError("User not found")

    @tool(ToolKind.READ)
    def get_order_details(self, order_id: str) -> Order:
        """Get the status and details of an order.

        Args:
            order_id: Order id including its leading '#', for example '#W0000000'.
        """
        return self._order(order_id)

    @tool(ToolKind.READ)
    def get_product_details(self, product_id: str) -> Product:
        """Get the inventory details of a product: every variant with its options, availability and price.

        Args:
            product_id: Product id, for example '6086499569' (a product id, not an item id).
        """
        return self._product(product_id)

    @tool(ToolKind.READ)
    def get_item_details(self, item_id: str) -> Variant:
        """Get the inventory details of one item (a product variant).

        Args:
            item_id: Item id, for example '6086499569' (an item id, not a product id).
        """
        for product in self.state["products"].values():
            if item_id in product.variants:
                return product.variants[item_id]
        raise ToolError("Item not found")

    @tool(ToolKind.READ)
    def get_user_details(self, user_id: str) -> User:
        """Get the details of a user, including their payment methods and orders.

        Args:
            user_id: User id, for example 'sara_doe_496'.
        """
        return self._user(user_id)

    @tool(ToolKind.READ)
    def list_all_product_types(self) -> str:
        """List the name and product id of every product type.

        Each product type has several items with their own item ids and options. Returns a JSON object of product name to product id, sorted by name.
        """
        names = {product.name: product.product_id for product in self.state["products"].values()}
        return json.dumps(names, sort_keys=True)

    # ------------------------------------------------------------------ write: pending orders

    @tool(ToolKind.WRITE)
    def cancel_pending_order(self, order_id: str, reason: str) -> Order:
        """Cancel a pending order; processed or delivered orders cannot be cancelled.

        Explain the cancellation and get the user's explicit confirmation (yes/no) first. The order becomes 'cancelled' and its payments are refunded: at once to a gift card, otherwise within 5-7 business days. Returns the order after the cancellation.

        Args:
            order_id: Order id including its leading '#', for example '#W0000000'.
            reason: The reason for cancellation, either 'no longer needed' or 'ordered by mistake'.
        """
        if self._order(order_id).status != "pending":
            raise ToolError("Non-pending order cannot be cancelled")
        if reason not in CANCEL_REASONS:
            raise ToolError("Invalid reason")
        order = self.state["orders"].edit(order_id)
        refunds = []
        # Every history entry is refunded, whatever its type (tau2 does the same).
        for payment in order.payment_history:
            refunds.append(OrderPayment(transaction_type="refund", amount=payment.amount, payment_method_id=payment.payment_method_id))
            self._user(order.user_id)
            if isinstance(self._payment_method(order.user_id, payment.payment_method_id), GiftCard):
                self._add_to_gift_card(order.user_id, payment.payment_method_id, payment.amount)
        order.status = "cancelled"
        order.cancel_reason = reason
        order.payment_history.extend(refunds)
        return order

    @tool(ToolKind.WRITE)
    def modify_pending_order_address(self, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> Order:
        """Modify the shipping address of a pending order.

        Explain the change and get the user's explicit confirmation (yes/no) first. Returns the order after the change.

        Args:
            order_id: Order id including its leading '#', for example '#W0000000'.
            address1: Street line, for example '123 Main St'.
            address2: Apartment or suite line, for example 'Apt 1', or '' when there is none.
            city: City, for example 'San Francisco'.
            state: State code, for example 'CA'.
            country: Country, for example 'USA'.
            zip: Zip code, for example '12345'.
        """
        if not _is_pending(self._order(order_id)):
            raise ToolError("Non-pending order cannot be modified")
        address = make_address(address1=address1, address2=address2, city=city, state=state, country=country, zip=zip)
        order = self.state["orders"].edit(order_id)
        order.address = address
        return order

    @tool(ToolKind.WRITE)
    def modify_pending_order_items(self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str) -> Order:
        """Modify items of a pending order to other items of the same product type. This can be done only once per pending order.

        Explain the change and get the user's explicit confirmation (yes/no) first. Returns the order after the change.

        Args:
            order_id: Order id including its leading '#', for example '#W0000000'.
            item_ids: The item ids to be modified, each such as '1008292230'. The list may repeat an item.
            new_item_ids: The new item ids, each such as '1008292230', at the same position as the item it replaces and of the same product. The list may repeat an item.
            payment_method_id: The payment method that pays or receives the price difference, such as 'gift_card_0000000' or 'credit_card_0000000'; look it up in the user or order details.
        """
        current = self._order(order_id)
        if current.status != "pending":
            raise ToolError("Non-pending order cannot be modified")
        _check_counts(current, item_ids, lambda item_id: f"{item_id} not found")
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match")
        diff: float = 0
        variant = None
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
            if item_id == new_item_id:
                raise ToolError("The new item id should be different from the old item id")
            item = _first_item(current, item_id)
            variant = self._available_variant(item.product_id, new_item_id)
            diff += variant.price - item.price
        method = self._payment_method(current.user_id, payment_method_id)
        if isinstance(method, GiftCard) and method.balance < diff:
            raise ToolError("Insufficient gift card balance to pay for the new item")
        order = self.state["orders"].edit(order_id)
        # The difference is stored unrounded, and a zero difference is a refund of 0.0.
        order.payment_history.append(
            OrderPayment(transaction_type="payment" if diff > 0 else "refund", amount=float(abs(diff)), payment_method_id=payment_method_id)
        )
        if isinstance(method, GiftCard):
            self._add_to_gift_card(current.user_id, payment_method_id, -diff)
        _apply_item_changes(order, item_ids, new_item_ids, variant)
        order.status = "pending (item modified)"
        return order

    @tool(ToolKind.WRITE)
    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> Order:
        """Modify the payment method of a pending order.

        Explain the change and get the user's explicit confirmation (yes/no) first. Returns the order after the change.

        Args:
            order_id: Order id including its leading '#', for example '#W0000000'.
            payment_method_id: The new payment method, such as 'gift_card_0000000' or 'credit_card_0000000'; look it up in the user or order details.
        """
        current = self._order(order_id)
        if not _is_pending(current):
            raise ToolError("Non-pending order cannot be modified")
        method = self._payment_method(current.user_id, payment_method_id)
        history = current.payment_history
        if len(history) != 1 or history[0].transaction_type != "payment":
            raise ToolError("There should be exactly one payment for a pending order")
        old_method_id = history[0].payment_method_id
        if old_method_id == payment_method_id:
            raise ToolError("The new payment method should be different from the current one")
        amount = history[0].amount
        if isinstance(method, GiftCard) and method.balance < amount:
            raise ToolError("Insufficient gift card balance to pay for the order")
        order = self.state["orders"].edit(order_id)
        order.payment_history.extend(
            [
                OrderPayment(transaction_type="payment", amount=amount, payment_method_id=payment_method_id),
                OrderPayment(transaction_type="refund", amount=amount, payment_method_id=old_method_id),
            ]
        )
        if isinstance(method, GiftCard):
            self._add_to_gift_card(order.user_id, payment_method_id, -amount)
        if isinstance(self._payment_method(order.user_id, old_method_id), GiftCard):
            self._add_to_gift_card(order.user_id, old_method_id, amount)
        return order

    # ------------------------------------------------------------------ write: delivered orders and users

    @tool(ToolKind.WRITE)
    def exchange_delivered_order_items(self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str) -> Order:
        """Exchange items of a delivered order for other items of the same product type. A delivered order can be returned or exchanged only once.

        Explain the exchange and get the user's explicit confirmation (yes/no) first. Returns the order after the exchange request.

        Args:
            order_id: Order id including its leading '#', for example '#W0000000'.
            item_ids: The item ids to be exchanged, each such as '1008292230'. The list may repeat an item.
            new_item_ids: The new item ids, each such as '1008292230', at the same position as the item it replaces and of the same product. The list may repeat an item.
            payment_method_id: The payment method that pays or receives the price difference, such as 'gift_card_0000000' or 'credit_card_0000000'; look it up in the user or order details.
        """
        current = self._order(order_id)
        if current.status != "delivered":
            raise ToolError("Non-delivered order cannot be exchanged")
        _check_counts(current, item_ids, lambda item_id: f"Number of {item_id} not found.")
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match.")
        diff: float = 0
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
            item = _first_item(current, item_id)
            diff += self._available_variant(item.product_id, new_item_id).price - item.price
        diff = round(diff, 2)
        method = self._payment_method(current.user_id, payment_method_id)
        if isinstance(method, GiftCard) and method.balance < diff:
            raise ToolError("Insufficient gift card balance to pay for the price difference")
        order = self.state["orders"].edit(order_id)
        order.status = "exchange requested"
        order.exchange_items = sorted(item_ids)
        order.exchange_new_items = sorted(new_item_ids)
        order.exchange_payment_method_id = payment_method_id
        order.exchange_price_difference = diff
        return order

    @tool(ToolKind.WRITE)
    def return_delivered_order_items(self, order_id: str, item_ids: list[str], payment_method_id: str) -> Order:
        """Return some items of a delivered order; the order becomes 'return requested'.

        Explain the return and get the user's explicit confirmation (yes/no) first. The user gets an email on how and where to send the items back. Returns the order after the return request.

        Args:
            order_id: Order id including its leading '#', for example '#W0000000'.
            item_ids: The item ids to be returned, each such as '1008292230'. The list may repeat an item.
            payment_method_id: The payment method that receives the refund: the original one or a gift card, such as 'gift_card_0000000' or 'credit_card_0000000'; look it up in the user or order details.
        """
        current = self._order(order_id)
        if current.status != "delivered":
            raise ToolError("Non-delivered order cannot be returned")
        self._user(current.user_id)
        method = self._payment_method(current.user_id, payment_method_id)
        if not isinstance(method, GiftCard) and payment_method_id != current.payment_history[0].payment_method_id:
            raise ToolError("Payment method should be the original payment method")
        _check_counts(current, item_ids, lambda item_id: "Some item not found")
        order = self.state["orders"].edit(order_id)
        order.status = "return requested"
        order.return_items = sorted(item_ids)
        order.return_payment_method_id = payment_method_id
        return order

    @tool(ToolKind.WRITE)
    def modify_user_address(self, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> User:
        """Modify the default address of a user.

        Explain the change and get the user's explicit confirmation (yes/no) first. Returns the user after the change.

        Args:
            user_id: User id, for example 'sara_doe_496'.
            address1: Street line, for example '123 Main St'.
            address2: Apartment or suite line, for example 'Apt 1', or '' when there is none.
            city: City, for example 'San Francisco'.
            state: State code, for example 'CA'.
            country: Country, for example 'USA'.
            zip: Zip code, for example '12345'.
        """
        self._user(user_id)
        address = make_address(address1=address1, address2=address2, city=city, state=state, country=country, zip=zip)
        user = self.state["users"].edit(user_id)
        user.address = address
        return user

    # ------------------------------------------------------------------ helpers

    def _order(self, order_id: str) -> Order:
        if order_id not in self.state["orders"]:
            raise ToolError("Order not found")
        return self.state["orders"][order_id]

    def _user(self, user_id: str) -> User:
        if user_id not in self.state["users"]:
            raise ToolError("User not found")
        return self.state["users"][user_id]

    def _product(self, product_id: str) -> Product:
        if product_id not in self.state["products"]:
            raise ToolError("Product not found")
        return self.state["products"][product_id]

    def _available_variant(self, product_id: str, item_id: str) -> Variant:
        variants = self._product(product_id).variants
        if item_id not in variants:
            raise ToolError("Variant not found")
        if not variants[item_id].available:
            raise ToolError(f"New item {item_id} not found or available")
        return variants[item_id]

    def _payment_method(self, user_id: str, payment_method_id: str) -> PaymentMethod:
        methods = self._user(user_id).payment_methods
        if payment_method_id not in methods:
            raise ToolError("Payment method not found")
        return methods[payment_method_id]

    def _add_to_gift_card(self, user_id: str, payment_method_id: str, amount: float) -> None:
        """Change a gift card's balance on a private copy of the user, rounding to cents as tau2 does."""
        card = self.state["users"].edit(user_id).payment_methods[payment_method_id]
        card.balance += amount
        card.balance = round(card.balance, 2)


def _is_pending(order: Order) -> bool:
    """The loose test (also true for 'pending (item modified)'); only item changes need plain 'pending'."""
    return "pending" in order.status


def _check_counts(order: Order, item_ids: list[str], message: Callable[[str], str]) -> None:
    """Each id may be named at most as often as the order holds it."""
    held = [item.item_id for item in order.items]
    for item_id in item_ids:
        if item_ids.count(item_id) > held.count(item_id):
            raise ToolError(message(item_id))


def _first_item(order: Order, item_id: str) -> Any:
    for item in order.items:
        if item.item_id == item_id:
            return item
    raise ToolError(f"Item {item_id} not found")


def _apply_item_changes(order: Order, item_ids: list[str], new_item_ids: list[str], last: Variant | None) -> None:
    """Give each modified item its new id, and (tau2 quirk) the last new variant's price and options."""
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
        # Looked up by current ids, so an earlier pair's new id can be found by a later pair.
        item = _first_item(order, item_id)
        item.item_id = new_item_id
        assert last is not None
        item.price = last.price
        item.options = dict(last.options)


def make_address(**fields: Any) -> UserAddress:
    """A UserAddress, refusing non-string fields as tau2's model validation does."""
    wrong = [f"{name}: Input should be a valid string (got {type(value).__name__})" for name, value in fields.items() if not isinstance(value, str)]
    if wrong:
        raise ToolError(f"{len(wrong)} validation error{'s' if len(wrong) > 1 else ''} for UserAddress: " + "; ".join(wrong))
    return UserAddress(**fields)


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def evaluate_arithmetic(expression: str) -> Any:
    """Python's value of an arithmetic expression (what eval gives), without eval; huge powers refused."""
    return _evaluate(ast.parse(expression.strip(), filename="<string>", mode="eval").body)


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and isinstance(right, (int, float)) and abs(right) > 1000:
            raise ToolError("Exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(element) for element in node.elts)
    raise ToolError("Invalid expression")
