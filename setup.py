"""The one compiled part of the package: a folder's listing in C (`_listing.c`).

Optional: where no C compiler is at hand the install goes on without it, and
`counterfoil.commands.tree.listing` runs its own Python loop with the same results.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "counterfoil.commands.tree._listing",
            ["server/counterfoil/commands/tree/_listing.c"],
            optional=True,
        )
    ]
)
