"""The library desk's tools over three tables: books, members and loans.

Records are shared by every conversation of a run: never change one in place. Build a new record
and assign it (`table[key] = {**old, "field": new}`).
"""

from __future__ import annotations

from typing import Any

from bench_kernel import ToolError, ToolKind, Toolkit, tool


class LibraryTools(Toolkit):
    """The agent's tools at the library desk."""

    @tool(ToolKind.READ)
    def find_book(self, title: str) -> dict[str, Any]:
        """Find a book by its title and say whether it is on the shelf.

        Args:
            title: The book's title, for example "The Quiet Orchard"; case and surrounding spaces do not matter.

        Returns:
            The book's record: id, title, author and whether it is available.

        Raises:
            ToolError: No book has that title.
        """
        wanted = title.strip().lower()
        for book in self.state["books"].values():
            if book["title"].lower() == wanted:
                return dict(book)
        raise ToolError(f"No book titled '{title}'.")

    @tool(ToolKind.READ)
    def get_member(self, member_id: str) -> dict[str, Any]:
        """Get a member's record: name, loan limit and the ids of the books they have on loan.

        Args:
            member_id: The member's card number, such as "M-1".

        Returns:
            The member's record with a list of the book ids on loan.

        Raises:
            ToolError: No member has that card number.
        """
        member = self._member(member_id)
        on_loan = [loan["book_id"] for loan in self.state["loans"].values() if loan["member_id"] == member_id]
        return {**member, "books_on_loan": on_loan}

    @tool(ToolKind.WRITE)
    def lend_book(self, member_id: str, book_id: str) -> dict[str, Any]:
        """Lend an available book to a member who is under their loan limit.

        Args:
            member_id: The member's card number, such as "M-1".
            book_id: The book's id, as given by find_book, such as "B-1".

        Returns:
            The new loan: its id, the member and the book.

        Raises:
            ToolError: The member or book is unknown, the book is on loan, or the member is at their limit.
        """
        member = self._member(member_id)
        book = self.state["books"].get(book_id)
        if book is None:
            raise ToolError(f"No book with id '{book_id}'.")
        if not book["available"]:
            raise ToolError(f"'{book['title']}' is already on loan.")
        loans = self.state["loans"]
        held = sum(1 for loan in loans.values() if loan["member_id"] == member_id)
        if held >= member["max_loans"]:
            raise ToolError(f"Member {member_id} already has {held} books, their limit of {member['max_loans']}.")
        # Ids follow the table size, so a replayed conversation gets the ids of the gold one.
        loan_id = f"L-{len(loans) + 1}"
        loans[loan_id] = {"id": loan_id, "member_id": member_id, "book_id": book_id}
        self.state["books"][book_id] = {**book, "available": False}
        return dict(loans[loan_id])

    def assert_on_loan_to(self, book_id: str, member_id: str) -> bool:
        """For task files (not a tool): True when the member has this book on loan."""
        return any(loan["book_id"] == book_id and loan["member_id"] == member_id
                   for loan in self.state["loans"].values())

    def _member(self, member_id: str) -> dict[str, Any]:
        member = self.state["members"].get(member_id)
        if member is None:
            raise ToolError(f"No member with card number '{member_id}'.")
        return member
