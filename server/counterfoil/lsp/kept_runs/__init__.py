"""The runs kept on disk as the daemon serves them (`counterfoil/sessions`, `inspect`,
`discard`, `branches`), and the other queries answered without starting anything: the
status, the receipts and their verification, stored objects."""
