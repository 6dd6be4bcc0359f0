"""Evidence that travels with a commit: a run's receipts as a signed in-toto attestation.

`statement` builds an in-toto Statement v1 from a verified receipt log for one commit, `dsse`
wraps it in a DSSE envelope signed with the person's receipt-signing key, `git` stores it as a
note under `refs/notes/counterfoil`, and `check` verifies an envelope offline against allowed
signers the reviewer names (a file, or the base revision's) and the commit's own bytes, with
`hand_changes` accounting for every path the commit changes. The formats are the supply chain's own (what SLSA
provenance and Sigstore use), so any DSSE verifier can check the signature.
"""
