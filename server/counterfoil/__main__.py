"""`counterfoil` and `python -m counterfoil`: `serve` starts the daemon with nothing of the
terminal's imported (its start is the editor's wait); every other command is the terminal's.
The one place where the two front ends meet, so neither imports the other."""

import sys


def main() -> int:
    if sys.argv[1:2] == ["serve"]:
        from .openblas import preload_openblas

        preload_openblas()  # a process of its own: OpenBLAS for the CPU path
        from .lsp import serve

        return serve(sys.argv[2:])
    from .cli.main import main as terminal_main

    return terminal_main()


if __name__ == "__main__":
    raise SystemExit(main())
