import sys

if sys.argv[1:2] == ["serve"]:  # the daemon's start path: nothing of the CLI's is imported
    from .openblas import preload_openblas

    preload_openblas()
    from .lsp import serve

    raise SystemExit(serve(sys.argv[2:]))

from .cli.main import main

raise SystemExit(main())
