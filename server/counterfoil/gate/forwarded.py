"""An attribute a facade keeps on one of its parts: read on the facade, held by the part, so
the part never reaches back into the facade for its settings. It is never set through the
facade: what the facade is set up with is given when it is built."""

from __future__ import annotations

from typing import Generic, TypeVar, overload

T = TypeVar("T")


class Forwarded(Generic[T]):
    """`name = Forwarded[T]("part")`: `facade.name` reads `facade.part.name`."""

    def __init__(self, part: str) -> None:
        self.part = part
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, facade: None, owner: type) -> Forwarded[T]: ...

    @overload
    def __get__(self, facade: object, owner: type) -> T: ...

    def __get__(self, facade: object, owner: type) -> Forwarded[T] | T:
        if facade is None:
            return self
        value: T = getattr(getattr(facade, self.part), self.name)
        return value

    def __set__(self, facade: object, value: T) -> None:
        raise AttributeError(
            f"{self.name} is set up when the {type(facade).__name__} is built, never after"
        )
