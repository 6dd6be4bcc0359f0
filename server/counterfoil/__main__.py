import sys

if sys.argv[1:2] == ["serve"]:  # the daemon's start path: nothing of the CLI's is imported
    from .lsp import serve
    from .models.cpu_path import preload_openblas

    preload_openblas(sys.argv[1:])

    raise SystemExit(serve(sys.argv[2:]))

from .cli.main import main

raise SystemExit(main())
