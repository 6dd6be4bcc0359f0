"""`counterfoil eval`: run task packages with one or more models and report what each run did.

`package` reads and stages a package, `runner` runs and grades one task, `grading` holds the
check types, `report` and `html` present the results, `terminal` is the command.
"""
